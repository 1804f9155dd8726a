import Testing
import ParlorStore

/// Migrations that rebuild or reshape tables, run on a database that already holds rows of the schema before them.
@Suite struct SchemaUpgradeTests {
    private static func embedded(before id: String) -> [Migration] {
        Migrations.embedded.filter { $0.id < id }
    }

    /// A database at migration 004 with a room, two members (one joined, one kicked), a role and three events.
    private static func seedBefore005(path: String) throws {
        let database = try Database(DatabaseConfiguration(path: path, migrations: embedded(before: "005")))
        defer { database.close() }
        try database.write { db in
            try db.insertUser("USR-a")
            try db.insertUser("USR-b")
            try db.run("INSERT INTO rooms (id, name, display_name, created_at, last_event_id) VALUES ('RM-1', 'one', 'One', 1, 3)")
            try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES ('MEM-a', 'RM-1', 'USR-a', 'JOINED', 10)")
            try db.run("""
                INSERT INTO members (id, room_id, user_id, state, joined_at, left_at, left_reason, audio_enabled)
                VALUES ('MEM-b', 'RM-1', 'USR-b', 'LEFT', 11, 12, 'kicked', 1)
                """)
            try db.run("INSERT INTO room_users (room_id, user_id, role, hand_raised_at) VALUES ('RM-1', 'USR-b', 'listener', 13)")
            for seq in 1...3 {
                try db.run("INSERT INTO events (room_id, seq, type, body, created_at) VALUES ('RM-1', ?, 'member:joined', '{}', 1)",
                           [.integer(Int64(seq))])
            }
        }
    }

    /// The seeded database opened with every embedded migration.
    private static func withUpgradedDatabase(_ body: (Database) throws -> Void) throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/parlor.db"
            try seedBefore005(path: path)
            let database = try Database(DatabaseConfiguration(path: path))
            defer { database.close() }
            try body(database)
        }
    }

    @Test func membershipChecksWithoutListsKeepRowsAndRefuseWhatTheListsRefused() throws {
        try Self.withUpgradedDatabase { database in
            #expect(try database.migrationStatus().map(\.id) == Migrations.embedded.map(\.id))

            try database.read { db in
                let members = try db.query("SELECT id, state, left_reason, audio_enabled FROM members ORDER BY id")
                #expect(members.map { $0.string("id") } == ["MEM-a", "MEM-b"])
                #expect(members.map { $0.string("state") } == ["JOINED", "LEFT"])
                #expect(members.map { $0.string("left_reason") } == [nil, "kicked"])
                #expect(members.map { $0.int("audio_enabled") } == [0, 1])
                #expect(try db.queryOne("SELECT role, hand_raised_at FROM room_users")?.string("role") == "listener")
                let indexes = try db.query("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('members', 'room_users') AND sql IS NOT NULL ORDER BY name")
                #expect(indexes.map { $0.string("name") } == ["members_by_room", "members_one_joined", "room_users_hands", "room_users_moderators"])
                // The point of 005: no CHECK with an IN list is left on the tables every join and leave writes.
                let tables = try db.query("SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN ('members', 'room_users')")
                #expect(tables.count == 2 && tables.allSatisfy { !($0.string("sql") ?? "IN (").contains(" IN (") })
            }
            try database.write { db throws in
                for (column, value) in [("state", "GONE"), ("left_reason", "vanished")] {
                    #expect(throws: StoreError.self, "\(column) = \(value) is refused") {
                        try db.run("UPDATE members SET \(column) = ? WHERE id = 'MEM-b'", [.text(value)])
                    }
                }
                #expect(throws: StoreError.self) { try db.run("UPDATE room_users SET role = 'owner'") }
                for reason in ["left", "dropped", "kicked", "room_closed"] {
                    #expect(try db.run("UPDATE members SET left_reason = ? WHERE id = 'MEM-b'", [.text(reason)]) == 1)
                }
                #expect(throws: StoreError.self, "one joined member per user and room, still") {
                    try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES ('MEM-c', 'RM-1', 'USR-a', 'JOINED', 20)")
                }
            }
        }
    }

    @Test func eventCounterColumnIsGoneAndTheEventsKeepTheirIds() throws {
        try Self.withUpgradedDatabase { database in
            try database.read { db in
                let columns = try db.query("SELECT name FROM pragma_table_info('rooms')").compactMap { $0.string("name") }
                #expect(!columns.isEmpty && !columns.contains("last_event_id"))
                #expect(try db.queryInteger("SELECT MAX(seq) FROM events WHERE room_id = 'RM-1'") == 3)
            }
        }
    }

    /// 007: a leave leaves the member's entry where it is (no state in the key), and the room's members still list.
    @Test func membersByRoomHasNoStateAndTheHistoryStillLists() throws {
        try Self.withUpgradedDatabase { database in
            let columns: [String] = try database.read { db in
                try db.query("SELECT name FROM pragma_index_info('members_by_room') ORDER BY seqno").compactMap { $0.string("name") }
            }
            #expect(columns == ["room_id", "joined_at", "id"])
            let history: [String] = try database.read { db in
                try db.query("SELECT id FROM members WHERE room_id = 'RM-1' ORDER BY joined_at, id").compactMap { $0.string("id") }
            }
            #expect(history == ["MEM-a", "MEM-b"])
        }
    }

    /// 008: members is one B-tree keyed by its id (no rowid, no separate index of the id), with its rows, its
    /// unique id and its foreign keys as before.
    @Test func membersAreKeptByTheirIdWithoutARowid() throws {
        try Self.withUpgradedDatabase { database in
            try database.read { db in
                #expect(try db.queryInteger("SELECT wr FROM pragma_table_list WHERE name = 'members'") == 1)
                #expect(try db.queryInteger("SELECT COUNT(*) FROM sqlite_master WHERE tbl_name = 'members' AND type = 'index'") == 2)
                let member = try db.queryOne("SELECT room_id, user_id, joined_at, left_at FROM members WHERE id = 'MEM-b'")
                #expect(member?.string("room_id") == "RM-1" && member?.string("user_id") == "USR-b")
                #expect(member?.int("joined_at") == 11 && member?.int("left_at") == 12)
            }
            try database.write { db throws in
                #expect(throws: StoreError.self, "the id is still unique") {
                    try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES ('MEM-b', 'RM-1', 'USR-b', 'LEFT', 30)")
                }
                #expect(throws: StoreError.self, "the room must exist") {
                    try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES ('MEM-d', 'RM-2', 'USR-b', 'JOINED', 30)")
                }
                #expect(try db.run("INSERT INTO members (id, room_id, user_id, state, joined_at) VALUES ('MEM-d', 'RM-1', 'USR-b', 'JOINED', 30)") == 1)
            }
        }
    }
}
