import ParlorCodec
import ParlorHTTP
import ParlorProtocol
import ParlorRooms

/// A request field that is missing or wrong, named so the client can fix it.
struct FieldError: Error {
    let field: String
    let rule: String
    let missing: Bool
    /// The code sent for it; by default a missing or invalid field's.
    var specificCode: ErrorCode? = nil

    init(field: String, rule: String, missing: Bool, code: ErrorCode? = nil) {
        self.field = field
        self.rule = rule
        self.missing = missing
        self.specificCode = code
    }

    static func missing(_ field: String) -> FieldError { FieldError(field: field, rule: "is required", missing: true) }
    static func invalid(_ field: String, _ rule: String) -> FieldError { FieldError(field: field, rule: rule, missing: false) }

    var code: ErrorCode { specificCode ?? (missing ? .requestMissingField : .requestInvalidField) }
    var detail: String { "\(field) \(rule)" }
}

/// Reads typed fields out of a request body.
struct ProtocolFields {
    let body: JSONObject
    let maxPageSize: Int
    let defaultPageSize: Int

    func string(_ name: String) throws(FieldError) -> String {
        guard let value = body[name], !value.isNull else { throw .missing("body.\(name)") }
        guard case .string(let text) = value else { throw .invalid("body.\(name)", "must be a string, not \(value.typeName)") }
        guard !text.isEmpty, text.utf8.count <= 256 else { throw .invalid("body.\(name)", "must be 1 to 256 bytes") }
        return text
    }

    func optionalString(_ name: String) throws(FieldError) -> String? {
        guard let value = body[name], !value.isNull else { return nil }
        return try string(name)
    }

    func optionalInt(_ name: String, in range: ClosedRange<Int64>) throws(FieldError) -> Int64? {
        guard let value = body[name], !value.isNull else { return nil }
        guard let number = value.intValue, range.contains(Int64(number)) else {
            throw .invalid("body.\(name)", "must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return Int64(number)
    }

    func bool(_ name: String) throws(FieldError) -> Bool {
        guard let flag = try optionalBool(name) else { throw .missing("body.\(name)") }
        return flag
    }

    func optionalBool(_ name: String) throws(FieldError) -> Bool? {
        guard let value = body[name], !value.isNull else { return nil }
        guard case .bool(let flag) = value else { throw .invalid("body.\(name)", "must be true or false") }
        return flag
    }

    /// A member role: moderator, speaker or listener.
    func role(_ name: String) throws(FieldError) -> MemberRole {
        guard let role = MemberRole(rawValue: try string(name)) else {
            throw .invalid("body.\(name)", "must be moderator, speaker or listener")
        }
        return role
    }

    func pageSize() throws(FieldError) -> Int {
        Int(try optionalInt("page_size", in: 1...Int64(maxPageSize)) ?? Int64(defaultPageSize))
    }

    func cursor() throws(FieldError) -> PageCursor? {
        guard let text = try optionalString("cursor") else { return nil }
        guard let cursor = PageCursor(encoded: text) else { throw .invalid("body.cursor", "is not a cursor this server issued") }
        return cursor
    }

    /// `role` of a members listing: joined members only, in join order, so no other state, order or `hands`.
    static func memberRole(_ text: String?, of query: MembersQuery) -> Result<MemberRole?, FieldError> {
        guard let text else { return .success(nil) }
        guard let role = MemberRole(rawValue: text) else { return .failure(.invalid("body.role", "must be moderator, speaker or listener")) }
        guard !query.descending, !query.allStates, query.state ?? .joined == .joined, !query.handsRaised else {
            return .failure(.invalid("body.role", "lists joined members in join order: it takes no order, state or hands"))
        }
        return .success(role)
    }

    /// `order` (asc|desc) and `state` (JOINED|LEFT|ALL) of a members listing.
    static func membersFilter(order: String?, state: String?) -> Result<MembersQuery, FieldError> {
        var query = MembersQuery(pageSize: 0, cursor: nil, descending: false, state: nil)
        switch order?.lowercased() {
        case nil, "asc": break
        case "desc": query.descending = true
        default: return .failure(.invalid("order", "must be asc or desc"))
        }
        switch state?.uppercased() {
        case nil: break
        case "ALL": query.allStates = true
        case let name?:
            guard let parsed = MemberState(rawValue: name) else { return .failure(.invalid("state", "must be JOINED, LEFT or ALL")) }
            query.state = parsed
        }
        return .success(query)
    }
}
