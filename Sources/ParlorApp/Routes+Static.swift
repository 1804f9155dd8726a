import ParlorCodec
import ParlorHTTP

/// The built-in web client, compiled into the binary from Sources/ParlorApp/Web (see Package.swift).
enum WebClientFiles {
    struct File {
        let bytes: [UInt8]
        let contentType: String
    }

    /// Every file of Web/, by the path it is served at. A new file in Web/ needs a line here. Web/sdk holds
    /// symlinks to clients/js: the JavaScript client, which the web client imports as its protocol layer.
    static let files: [String: File] = [
        "/": File(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8"),
        "/index.html": File(bytes: PackageResources.index_html, contentType: "text/html; charset=utf-8"),
        "/app.js": script(PackageResources.app_js),
        "/audience.js": script(PackageResources.audience_js),
        "/chat.js": script(PackageResources.chat_js),
        "/e2ee-bytes.js": script(PackageResources.e2ee_bytes_js),
        "/e2ee-chat.js": script(PackageResources.e2ee_chat_js),
        "/e2ee-frames.js": script(PackageResources.e2ee_frames_js),
        "/e2ee-identity.js": script(PackageResources.e2ee_identity_js),
        "/e2ee-keys.js": script(PackageResources.e2ee_keys_js),
        "/e2ee-media.js": script(PackageResources.e2ee_media_js),
        "/e2ee-pipeline.js": script(PackageResources.e2ee_pipeline_js),
        "/e2ee-room.js": script(PackageResources.e2ee_room_js),
        "/e2ee-sdp.js": script(PackageResources.e2ee_sdp_js),
        "/e2ee-senderkey.js": script(PackageResources.e2ee_senderkey_js),
        "/e2ee-worker.js": script(PackageResources.e2ee_worker_js),
        "/e2ee-wrap.js": script(PackageResources.e2ee_wrap_js),
        "/events.js": script(PackageResources.events_js),
        "/intents.js": script(PackageResources.intents_js),
        "/lobby.js": script(PackageResources.lobby_js),
        "/moderation.js": script(PackageResources.moderation_js),
        "/room.js": script(PackageResources.room_js),
        "/rtc.js": script(PackageResources.rtc_js),
        "/session.js": script(PackageResources.session_js),
        "/sdk/parlor.js": script(PackageResources.parlor_js),
        "/sdk/parlor.d.ts": File(bytes: PackageResources.parlor_d_ts, contentType: "text/plain; charset=utf-8"),
        "/sfu.js": script(PackageResources.sfu_js),
        "/speaking.js": script(PackageResources.speaking_js),
        "/state.js": script(PackageResources.state_js),
        "/testhook.js": script(PackageResources.testhook_js),
        "/tiles.js": script(PackageResources.tiles_js),
        "/ui.js": script(PackageResources.ui_js),
        "/style.css": File(bytes: PackageResources.style_css, contentType: "text/css; charset=utf-8"),
    ]

    private static func script(_ bytes: [UInt8]) -> File {
        File(bytes: bytes, contentType: "text/javascript; charset=utf-8")
    }

    /// A strong validator per file, so browsers revalidate cheaply after an upgrade.
    static let etags: [String: String] = files.mapValues { "\"\(fnv1a($0.bytes))\"" }

    static func fnv1a(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return String(hash, radix: 16)
    }
}

extension Routes {
    /// GET / and the client's assets. Only the listed paths exist, so no request can reach the file system.
    func staticFile(_ request: HTTPRequest, _ context: RequestContext) throws -> RouteResult {
        let path = request.head.path
        guard let file = WebClientFiles.files[path], let etag = WebClientFiles.etags[path] else {
            throw HTTPError.notFound(.httpNotFound, "no route for \(path)")
        }
        var headers = HTTPHeaders()
        headers.add("Content-Type", file.contentType)
        headers.add("ETag", etag)
        headers.add("Cache-Control", "no-cache")
        headers.add("X-Content-Type-Options", "nosniff")
        headers.add("Content-Security-Policy", "default-src 'self'; connect-src 'self'; img-src 'self' data:; media-src 'self' blob:; frame-ancestors 'none'")
        if request.head.headers["If-None-Match"] == etag {
            return .response(HTTPResponse(status: 304, headers: headers))
        }
        return .response(HTTPResponse(status: 200, headers: headers, body: file.bytes))
    }
}
