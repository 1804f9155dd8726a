import ParlorStore

// Secrets shared by every node on the database (server_secrets).
extension PostgresDatabase {
    /// The secret `name`: the one already stored, or `generate()`'s, stored now. When nodes race, the first insert
    /// wins and every node reads that one, so all of them sign and verify with the same key.
    public func sharedSecret(named name: String, generate: () -> [UInt8]) throws -> [UInt8] {
        try writeOnPool { connection in
            try connection.run("""
                INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING
                """, [.text(name), .blob(generate()), .integer(PostgresConnection.nowMilliseconds())])
            guard let value = try connection.queryOne("SELECT value FROM server_secrets WHERE name = $1", [.text(name)])?.bytes("value") else {
                throw PostgresError(message: "the secret \(name) is missing right after its insert")
            }
            return value
        }
    }
}
