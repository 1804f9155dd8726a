import ParlorBasics
import ParlorMedia
import ParlorMetrics
import ParlorRooms
import ParlorStore

// The rooms domain's services on Parlor's SQLite database, as the server and the tests open them.
extension RoomsService {
    /// The server's rooms: a `SQLiteRoomStore` over `database`, the real clock and `thread`'s timers.
    public convenience init(database: Database, thread: any SerialThread, configuration: RoomsConfiguration, logger: Logger,
                            delivery: any DeliveryChannel, observer: (any RoomNoticeRecorder)? = nil,
                            metrics: ServerMetrics = ServerMetrics(), media: MediaServer? = nil) throws {
        try self.init(store: SQLiteRoomStore(database: database), thread: thread, configuration: configuration, logger: logger,
                      delivery: delivery, observer: observer, metrics: metrics, media: media)
    }
}

extension UserDirectory {
    /// The directory of Parlor's SQLite database.
    public convenience init(database: Database) {
        self.init(store: SQLiteUserStore(database: database))
    }
}
