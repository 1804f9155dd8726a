// The wire vocabulary (`JSONValue`, `ErrorCode`, `RequestType`, …) is part of the client's API: users of
// ParlorClient get it without a second import.
@_exported import ParlorProtocol
