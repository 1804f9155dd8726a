import ParlorStore

/// A `RoomStore` over either database: the rooms thread's batches in its write transaction, reads on its snapshots.
/// A dialect's store only says which reader and transaction wrap a connection.
public protocol SQLRoomStore: RoomStore {
    associatedtype Storage: SQLDatabase
    var database: Storage { get }
    func reader(on connection: Storage.Connection) -> any RoomReader
    func transaction(on connection: Storage.Connection) -> any RoomTransaction
}

extension SQLRoomStore {
    public func write<T>(_ body: (any RoomTransaction) throws -> T) throws -> T {
        try database.write { connection in try body(transaction(on: connection)) }
    }

    public func read<T>(_ body: (any RoomReader) throws -> T) throws -> T {
        try database.read { connection in try body(reader(on: connection)) }
    }

    public func isStorageFailure(_ error: any Error) -> Bool {
        Storage.isStorageFailure(error)
    }
}
