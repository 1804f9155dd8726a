import Testing
import ParlorStore

@Suite struct ConnectionTests {
    @Test func valuesRoundTrip() throws {
        let values: [SQLValue] = [
            .null, .integer(.max), .integer(.min), .real(-2.5), .text(""), .text("héllo 🎙️ with\0nul"),
            .blob([]), .blob([0, 1, 255]),
        ]
        try withDatabase(.memory) { database in
            let placeholders = Array(repeating: "?", count: values.count).joined(separator: ", ")
            let row = try database.read { try $0.queryOne("SELECT \(placeholders)", values) }
            #expect(row?.values == values)
        }
    }

    /// `SQLConnection`'s shared numbering: `$2` before `$1` still binds the second value, `$1` twice binds the first
    /// twice, and a `$1` inside a quoted string is text, not a parameter.
    @Test func dollarParametersBindByTheirNumber() throws {
        try withDatabase(.memory) { database in
            let row = try #require(try database.read {
                try $0.queryOne("SELECT $2 AS second, $1 AS first, $1 + 1 AS again, '$1' AS literal", [10, 20])
            })
            #expect(row.int("second") == 20)
            #expect(row.int("first") == 10)
            #expect(row.int("again") == 11)
            #expect(row.string("literal") == "$1")
        }
    }

    @Test func rowsAreReadableByNameAndPosition() throws {
        try withDatabase(.memory) { database in
            let row = try #require(try database.read {
                try $0.queryOne("SELECT 7 AS n, 'x' AS s, 1.5 AS d, 0 AS flag, NULL AS absent")
            })
            #expect(row.columnNames == ["n", "s", "d", "flag", "absent"])
            #expect(row["n"] == .integer(7))
            #expect(row[1] == .text("x"))
            #expect(row.int("n") == 7)
            #expect(row.string("s") == "x")
            #expect(row.double("d") == 1.5)
            #expect(row.bool("flag") == false)
            #expect(row.int("absent") == nil)
            #expect(row.string("n") == nil, "numbers are not silently turned into text")
            #expect(row.contains("s") && !row.contains("missing"))
        }
    }

    @Test func runReportsChangesAndLastInsertRowID() throws {
        try withDatabase(.memory) { database in
            try database.write { connection in
                try connection.insertUser("USR-1")
                #expect(connection.lastInsertRowID == 1)
                try connection.insertUser("USR-2")
                #expect(connection.lastInsertRowID == 2)
                #expect(try connection.run("UPDATE users SET tokens_valid_after = ?", [9]) == 2)
                #expect(try connection.run("DELETE FROM users WHERE id = ?", ["USR-none"]) == 0)
            }
        }
    }

    @Test func cachedStatementsAreReusedWithFreshBindings() throws {
        try withDatabase(.memory) { database in
            let names = try database.write { connection in
                for id in ["USR-a", "USR-b", "USR-c"] { try connection.insertUser(id, name: "name-\(id)") }
                return try ["USR-a", "USR-c"].map { id in
                    try connection.queryOne("SELECT name FROM users WHERE id = ?", [.text(id)])?.string("name")
                }
            }
            #expect(names == ["name-USR-a", "name-USR-c"])
        }
    }

    /// Statements of the same length but other text are told apart, and after more distinct texts than the cache
    /// holds (it starts over at 256) a statement used just before still runs: nothing keeps a finalized one.
    @Test func statementsAreFoundByTheirWholeTextAcrossACacheTurnover() throws {
        try withDatabase(.memory) { database in
            let results = try database.read { connection in
                var results = [
                    try connection.queryInteger("SELECT 1 + ?", [1]), try connection.queryInteger("SELECT 2 + ?", [1]),
                    try connection.queryInteger("SELECT 1 + ?", [5]),
                ]
                for index in 0..<300 {
                    results.append(try connection.queryInteger("SELECT \(index) + ?", [0]))
                    // The previous text again: across the turnover it was just finalized and must be prepared anew.
                    results.append(try connection.queryInteger("SELECT \(max(index - 1, 0)) + ?", [1000]))
                }
                results.append(try connection.queryInteger("SELECT 299 + ?", [1]))
                results.append(try connection.queryInteger("SELECT 1 + ?", [2]))
                return results
            }
            var expected: [Int64?] = [2, 3, 6]
            for index in 0..<300 { expected += [Int64(index), Int64(max(index - 1, 0) + 1000)] }
            expected += [300, 3]
            #expect(results == expected)
        }
    }

    @Test func wrongParameterCountIsAnError() throws {
        try withDatabase(.memory) { database in
            let error = #expect(throws: StoreError.self) {
                try database.read { try $0.query("SELECT ?, ?", [1]) }
            }
            #expect(error?.message.contains("2 parameter(s) but got 1") == true)
        }
    }

    @Test func severalStatementsNeedExecute() throws {
        try withDatabase(.memory) { database in
            #expect(throws: StoreError.self) {
                try database.write { try $0.run("DELETE FROM users; DELETE FROM rooms") }
            }
            // Trailing blanks and comments are fine, and execute takes scripts.
            try database.write { connection in
                try connection.run("DELETE FROM users; -- done\n")
                try connection.execute("DELETE FROM users; DELETE FROM rooms;")
            }
        }
    }

    @Test func syntaxErrorsCarryMessageAndSQL() throws {
        try withDatabase(.memory) { database in
            let error = #expect(throws: StoreError.self) {
                try database.read { try $0.query("SELEC 1") }
            }
            #expect(error?.message.contains("syntax error") == true)
            #expect(error?.sql == "SELEC 1")
            #expect(error?.isConstraintViolation == false)
        }
    }
}
