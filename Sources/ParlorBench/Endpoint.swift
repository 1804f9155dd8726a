/// One server node the generator talks to (one `--url`): connects go to its address, its host:port goes into the
/// handshake's Host header.
struct Endpoint {
    let host: String
    let port: Int

    var url: String { "http://\(host):\(port)" }

    /// The node a client connects to: a room's members in turn over the nodes, starting one further for each room, so
    /// each room is spread over every node and every node holds the same share of the clients.
    static func node(ofClient index: Int, rooms: Int, nodes: Int) -> Int {
        nodes <= 1 ? 0 : (index % rooms + index / rooms) % nodes
    }
}
