import Testing
@testable import ParlorClient
@Test func placeholder() { #expect(Bool(true)) }
