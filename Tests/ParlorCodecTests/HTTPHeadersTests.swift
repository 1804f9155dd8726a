import Testing
@testable import ParlorCodec

/// Lookups skip fields by a key made of the name's length and its first and last letters; names that share that
/// key must still be told apart, and case must still not matter.
@Suite struct HTTPHeadersTests {
    @Test func namesWithTheSameKeyAreToldApart() {
        var headers: HTTPHeaders = ["X-Ab": "1", "x-cb": "2", "X-AB": "3"]
        #expect(headers["x-ab"] == "1")
        #expect(headers["X-CB"] == "2")
        #expect(headers["X-Bb"] == nil)
        #expect(headers.values("x-aB") == ["1", "3"])
        #expect(headers.count(of: "X-AB") == 2 && headers.count(of: "x-cb") == 1 && headers.count(of: "x-db") == 0)
        headers.replaceOrAdd("x-ab", "4")
        #expect(headers.map(\.name) == ["X-Ab", "x-cb"] && headers.map(\.value) == ["4", "2"])
        headers.remove("X-CB")
        #expect(headers.map(\.name) == ["X-Ab"] && !headers.contains("x-cb") && headers.contains("x-ab"))
        headers.replaceOrAdd("Date", "now")
        #expect(headers.count == 2 && headers["date"] == "now")
    }

    @Test func emptyAndOneLetterNames() {
        let headers: HTTPHeaders = ["": "empty", "A": "a"]
        #expect(headers[""] == "empty")
        #expect(headers["a"] == "a")
        #expect(headers["b"] == nil)
    }

    @Test func reservingRoomKeepsTheFieldsAndTheirOrder() {
        var headers: HTTPHeaders = ["Link": "<next>", "Content-Type": "application/json"]
        headers.reserveCapacity(headers.count + 8)
        headers.add("Date", "today")
        #expect(headers.map(\.name) == ["Link", "Content-Type", "Date"])
        #expect(headers["link"] == "<next>" && headers["date"] == "today")
    }

    @Test func linesAreWrittenSanitized() {
        let response = HTTPResponse(status: 200, headers: ["X-Long-Header-Name": "a value longer than eight\r\nX-Evil: 1", "B": "\0"],
                                    body: Array("{}".utf8))
        let text = String(decoding: response.serialized(), as: UTF8.self)
        #expect(text == "HTTP/1.1 200 OK\r\nX-Long-Header-Name: a value longer than eight  X-Evil: 1\r\nB:  \r\n\r\n{}")
    }
}
