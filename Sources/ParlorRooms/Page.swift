import ParlorCodec

/// A page of results and, when more follow, the cursor that continues after it.
public struct Page<Item: Sendable>: Sendable {
    public let items: [Item]
    public let next: PageCursor?

    /// `items` was fetched with one extra row to learn whether another page exists.
    public init(items: [Item], pageSize: Int, cursorOf: (Item) -> PageCursor) {
        if items.count > pageSize {
            self.items = Array(items.prefix(pageSize))
            next = self.items.last.map(cursorOf)
        } else {
            self.items = items
            next = nil
        }
    }
}

/// An opaque keyset position: base64url of "number:id". Clients pass it back unchanged.
public struct PageCursor: Sendable, Equatable {
    public let number: Int64
    public let id: String

    public var encoded: String {
        Base64.encode(Array("\(number):\(id)".utf8))
            .replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }

    public init(number: Int64, id: String) {
        self.number = number
        self.id = id
    }

    public init?(encoded: String) {
        guard encoded.utf8.count <= 512, let bytes = Base64URL.decode(encoded) else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":"), let number = Int64(text[..<colon]) else { return nil }
        self.number = number
        id = String(text[text.index(after: colon)...])
    }
}
