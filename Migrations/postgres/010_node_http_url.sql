-- Where other nodes reach a node's HTTP API (issue 38: a recording's files are downloaded through any node, which
-- proxies from the node that holds them). NULL: not known (a node before this migration, or not yet written).
ALTER TABLE nodes ADD COLUMN http_url TEXT;
