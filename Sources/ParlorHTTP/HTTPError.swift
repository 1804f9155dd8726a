import ParlorCodec
import ParlorProtocol

/// An error that renders as Parlor's JSON error body `{"code","title","detail"}`, answered with its code's HTTP status.
public struct HTTPError: Error, Sendable, CustomStringConvertible {
    public var code: ErrorCode
    public var title: String
    public var detail: String
    public var headers: HTTPHeaders

    public init(_ code: ErrorCode, title: String, detail: String, headers: HTTPHeaders = .init()) {
        self.code = code
        self.title = title
        self.detail = detail
        self.headers = headers
    }

    public var status: Int { code.httpStatus }

    public var description: String { "\(status) \(code.rawValue): \(detail)" }

    public var body: JSONValue { ["code": .string(code.rawValue), "title": .string(title), "detail": .string(detail)] }

    public func response() -> HTTPResponse {
        var response = HTTPResponse.json(body, status: status)
        for (name, value) in headers { response.headers.replaceOrAdd(name, value) }
        return response
    }

    public static func badRequest(_ code: ErrorCode, _ detail: String) -> HTTPError {
        HTTPError(code, title: "Bad request", detail: detail)
    }

    public static func invalidField(_ field: String, _ detail: String) -> HTTPError {
        HTTPError(.requestInvalidField, title: "Invalid field", detail: "\(field): \(detail)")
    }

    public static func missingField(_ field: String) -> HTTPError {
        HTTPError(.requestMissingField, title: "Missing field", detail: "\(field) is required")
    }

    public static func unauthorized(_ detail: String) -> HTTPError {
        HTTPError(.authInvalidToken, title: "Unauthorized", detail: detail,
                  headers: HTTPHeaders([("WWW-Authenticate", "Bearer")]))
    }

    public static func notFound(_ code: ErrorCode, _ detail: String) -> HTTPError {
        HTTPError(code, title: "Not found", detail: detail)
    }

    public static func internalError(_ detail: String = "the server failed to handle the request") -> HTTPError {
        HTTPError(.serverInternal, title: "Internal server error", detail: detail)
    }

    init(_ parseError: HTTPParseError) {
        self.init(parseError.errorCode, title: parseError.title, detail: parseError.detail)
    }
}

extension HTTPResponse {
    /// A JSON response; the server adds Date and Content-Length when it writes it.
    public static func json(_ value: JSONValue, status: Int = 200, headers: HTTPHeaders = .init()) -> HTTPResponse {
        var headers = headers
        headers.replaceOrAdd("Content-Type", "application/json; charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: value.encoded())
    }
}

extension HTTPRequest {
    /// The body parsed as a JSON object, or a 400 that says what is wrong with it.
    public func jsonObject() throws(HTTPError) -> JSONObject {
        guard !body.isEmpty else { throw HTTPError.badRequest(.requestInvalidJSON, "the request body must be a JSON object") }
        let value: JSONValue
        do {
            value = try JSONParser.parse(body)
        } catch {
            throw HTTPError.badRequest(.requestInvalidJSON, "the request body is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw HTTPError.badRequest(.requestInvalidJSON, "the request body must be a JSON object, not \(value.typeName)")
        }
        return object
    }
}
