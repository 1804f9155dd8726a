// swift-tools-version: 6.0
// Parlor: a self-hosted drop-in audio rooms server. No package dependencies; system C libraries only.
import PackageDescription

let package = Package(
    name: "Parlor",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .executable(name: "parlor", targets: ["parlor"]),
        .executable(name: "parlor-bench", targets: ["ParlorBench"]),
        .executable(name: "parlor-media-bench", targets: ["ParlorMediaBench"]),
        .executable(name: "parlor-srtp-probe", targets: ["ParlorSRTPProbe"]),
        .library(name: "ParlorApp", targets: ["ParlorApp"]),
        .library(name: "ParlorClient", targets: ["ParlorClient"]),
        // For test targets. ParlorTesting (event recorder, state waits) builds wherever ParlorClient does;
        // ParlorTestServer (`withParlor`, an in-process server) needs ParlorApp, so Linux only (epoll).
        .library(name: "ParlorTesting", targets: ["ParlorTesting"]),
        .library(name: "ParlorTestServer", targets: ["ParlorTestServer"]),
    ],
    targets: [
        // System C libraries (Debian -dev packages).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CJWT", pkgConfig: "libjwt", providers: [.apt(["libjwt-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        // epoll, eventfd, timerfd, accept4, recvmmsg and sendmmsg: Glibc does not expose them to Swift.
        .target(name: "CParlorSystem"),

        // Layers, in one dependency direction: loop → codec/protocols → media → store → rooms → app → executable.
        // Time spans, the monotonic clock, the pthread lock, the logger and the serial-thread shape: below the loop, so
        // the rooms domain uses them without importing it.
        .target(name: "ParlorBasics"),
        .target(name: "ParlorLoop", dependencies: ["ParlorBasics", "CParlorSystem", "COpenSSL"]),
        .target(name: "ParlorCodec"),
        // The wire vocabulary (JSON, request/event types, error codes with their HTTP status, frames), no I/O:
        // shared by the server's layers and the client.
        .target(name: "ParlorProtocol", dependencies: ["ParlorCodec"]),
        // The metrics registry every server layer records into, and its Prometheus text.
        .target(name: "ParlorMetrics", dependencies: ["ParlorLoop"]),
        .target(name: "ParlorHTTP", dependencies: ["ParlorLoop", "ParlorCodec", "ParlorProtocol", "ParlorMetrics", "COpenSSL"]),
        // SRTP and SRTCP (RFC 3711, RFC 7714) over OpenSSL's libcrypto: our packet transform, index and replay
        // bookkeeping around OpenSSL's AES-CTR, AES-GCM and HMAC-SHA1. Knows packets and keys, not DTLS or sockets.
        .target(name: "ParlorSRTP", dependencies: ["COpenSSL"]),
        // Node-to-node media links (issue 41), their pure layer: ephemeral X25519 keys, HMAC-signed link offers,
        // HKDF per-direction keys, and the AES-GCM packet with its replay window, all on OpenSSL's libcrypto. Bytes in,
        // bytes out: no sockets, rooms or database (not wired into the server yet).
        .target(name: "ParlorMediaLink", dependencies: ["COpenSSL"]),
        // Recordings' files: Ogg pages (RFC 3533), Ogg Opus tracks written from RTP packets without transcoding and
        // read back (RFC 7845), and the mix, decoded and encoded with Debian's libopus. Pure: bytes in, bytes out, no
        // files, sockets or rooms; RTP arrives as sequence, timestamp and payload, so it needs no ParlorMedia.
        .target(name: "ParlorRecording", dependencies: ["COpus"]),
        // A recorder in a process of its own, for ParlorRecordingTests (kill -9, a full disk); not installed.
        .executableTarget(name: "ParlorRecordingChild", dependencies: ["ParlorRecording"]),
        // Media forwarding's building blocks: STUN/ICE-lite, SDP, DTLS-SRTP (OpenSSL's handshake and exporter,
        // ParlorSRTP's packets), RTP/RTCP, batched UDP. No HTTP and no rooms: those use it, not the other way round.
        .target(name: "ParlorMedia", dependencies: ["ParlorLoop", "ParlorMetrics", "CParlorSystem", "COpenSSL", "ParlorSRTP"]),
        .executableTarget(name: "ParlorMigrationEmbedder"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["ParlorMigrationEmbedder"]),
        // SQLite's default VFS with each WAL commit written in one pwrite instead of two per page (wal_batch.c).
        .target(name: "CParlorSQLiteVFS", dependencies: ["CSQLite"]),
        .target(name: "ParlorStore", dependencies: ["CSQLite", "CParlorSQLiteVFS", "COpenSSL", "ParlorCodec", "CParlorSystem"], plugins: ["EmbedMigrations"]),
        // PostgreSQL through libpq, beside ParlorStore: connections, statements, migrations (Migrations/postgres).
        // It shares ParlorStore's value, row and migration types.
        .target(name: "ParlorPostgres", dependencies: ["CLibPQ", "ParlorStore"], plugins: ["EmbedMigrations"]),
        // No HTTP module and no loop: the rooms domain knows clients by `ClientID`, runs on a `SerialThread` the app
        // passes in, and hands its deliveries (encoded JSON) to a `DeliveryChannel` that ParlorApp implements.
        // Rooms decide who may send and receive audio and hand that to ParlorMedia's forwarding unit (--media sfu).
        .target(name: "ParlorRooms", dependencies: ["ParlorStore", "ParlorProtocol", "ParlorMetrics", "ParlorCodec", "ParlorBasics",
                                                    "ParlorMedia", "CJWT", "COpenSSL"]),
        // The rooms domain's stores on SQLite, beside ParlorRoomsPostgres: both write the SQL ParlorRooms shares.
        .target(name: "ParlorRoomsSQLite", dependencies: ["ParlorRooms", "ParlorStore", "ParlorProtocol", "ParlorBasics", "ParlorMedia",
                                                          "ParlorMetrics"]),
        // The rooms domain's stores on PostgreSQL: libpq stays out of ParlorRooms.
        .target(name: "ParlorRoomsPostgres", dependencies: ["ParlorRooms", "ParlorPostgres", "ParlorStore", "ParlorProtocol", "ParlorCodec",
                                                            "ParlorBasics"]),
        .target(name: "ParlorApp", dependencies: ["ParlorRooms", "ParlorRoomsSQLite", "ParlorRoomsPostgres", "ParlorPostgres", "ParlorHTTP", "ParlorProtocol", "ParlorMetrics", "ParlorStore", "ParlorLoop", "ParlorRecording",
                                                  "ParlorCodec", "ParlorMedia", "ParlorMediaLink", "ParlorSRTP", "COpenSSL"],
                // The web client ships inside the binary: no files to deploy, nothing fetched at run time.
                resources: [.embedInCode("Web")]),
        // ParlorMediaClient for `join --play/--record` (our SRTP, not libsrtp2).
        .executableTarget(name: "parlor", dependencies: ["ParlorApp", "ParlorClient", "ParlorPostgres", "ParlorMediaClient", "ParlorRecording", "ParlorLoop"]),

        // Load generator for bench/: the project's own event loop and codec, so it outruns a script-language client.
        .executableTarget(name: "ParlorBench", dependencies: ["ParlorLoop", "ParlorCodec"]),
        // A WebRTC-shaped client of the forwarding unit (offer, ICE checks, DTLS client, SRTP): tests, the media bench,
        // and `parlor join --play/--record` (an Ogg Opus file as the microphone, what the member hears into Ogg Opus).
        .target(name: "ParlorMediaClient", dependencies: ["ParlorMedia", "ParlorSRTP", "ParlorLoop", "ParlorRecording"]),
        // Media load client for bench/: speakers and listeners over real UDP, CPU per forwarded packet against the floor.
        .executableTarget(name: "ParlorMediaBench", dependencies: ["ParlorMediaClient", "ParlorMedia", "ParlorSRTP", "ParlorLoop", "ParlorCodec",
                                                          "ParlorProtocol", "CParlorSystem"]),

        // Cost per packet of ParlorSRTP's protect and unprotect, with 1 and 4,000 live sessions (bench/srtp-probe).
        .executableTarget(name: "ParlorSRTPProbe", dependencies: ["ParlorSRTP", "COpenSSL"]),

        // Client library: Foundation and the project's own codec and protocol, so it builds on Apple platforms too.
        // SHA-1 for the handshake's check comes from CryptoKit on Apple platforms and from OpenSSL's libcrypto on Linux;
        // TLS (https, wss) from Network.framework on Apple platforms and from OpenSSL's libssl on Linux.
        .target(name: "ParlorClient", dependencies: ["ParlorCodec", "ParlorProtocol",
                                                     .target(name: "COpenSSL", condition: .when(platforms: [.linux]))]),
        .target(name: "ParlorTesting", dependencies: ["ParlorClient"]),
        .target(name: "ParlorTestServer", dependencies: ["ParlorTesting", "ParlorClient", "ParlorApp"]),

        .testTarget(name: "ParlorLoopTests", dependencies: ["ParlorLoop", "ParlorBasics"]),
        .testTarget(name: "ParlorCodecTests", dependencies: ["ParlorCodec", "ParlorProtocol"]),
        .testTarget(name: "ParlorProtocolTests", dependencies: ["ParlorProtocol", "ParlorCodec"]),
        .testTarget(name: "ParlorMediaTests", dependencies: ["ParlorMedia", "ParlorMediaClient", "ParlorSRTP", "ParlorLoop", "COpenSSL"]),
        // RFC 3711 and RFC 7714 vectors, the index, replay and stream rules, and the cross-check against libsrtp
        // (pylibsrtp, through Tests/interop/srtp_crosscheck.py).
        .testTarget(name: "ParlorSRTPTests", dependencies: ["ParlorSRTP", "COpenSSL"]),
        // RFC 7748, RFC 5869 and RFC 4231 vectors through ParlorMediaLink's functions, offers, keys, packets and the window.
        .testTarget(name: "ParlorMediaLinkTests", dependencies: ["ParlorMediaLink"]),
        .testTarget(name: "ParlorStoreTests", dependencies: ["ParlorStore"]),
        // Ogg and Ogg Opus units, libopus-made tones through the track writer and the mixer, and the files checked by
        // opusinfo (opus-tools) and ffmpeg.
        // ParlorMedia and ParlorMediaClient for the room recorded through a real MediaServer's tap; the child runs a
        // recorder the tests kill -9 or give a file size limit.
        .testTarget(name: "ParlorRecordingTests", dependencies: ["ParlorRecording", "COpus", "ParlorMedia", "ParlorMediaClient", "ParlorLoop"]),
        // A private PostgreSQL cluster per test process (initdb + pg_ctl in a temporary directory), for the tests below.
        .target(name: "PostgresTestCluster", dependencies: ["ParlorPostgres"], path: "Tests/PostgresTestCluster"),
        .testTarget(name: "ParlorPostgresTests", dependencies: ["ParlorPostgres", "ParlorStore", "PostgresTestCluster"]),
        // The rooms logic without sockets: in-memory SQLite and PostgreSQL stores, a manual clock, deliveries recorded per client.
        // ParlorLoop for the rooms thread alone: an `EventLoop`, as in the server (no connection is fabricated).
        .testTarget(name: "ParlorRoomsTests", dependencies: ["ParlorRooms", "ParlorStore", "ParlorProtocol", "ParlorBasics",
                                                           "ParlorLoop", "ParlorRoomsSQLite", "ParlorRoomsPostgres", "ParlorPostgres", "PostgresTestCluster"]),
        // The router, the middleware and the whole chain through `HTTPPipeline.respond`, without sockets.
        .testTarget(name: "ParlorHTTPTests", dependencies: ["ParlorHTTP", "ParlorCodec", "ParlorProtocol", "ParlorLoop"]),
        .testTarget(name: "ParlorClientTests", dependencies: ["ParlorClient", "ParlorApp", "ParlorTesting", "ParlorTestServer"]),
        .testTarget(name: "ParlorAppTests", dependencies: ["ParlorApp", "ParlorClient", "ParlorCodec", "ParlorProtocol", "ParlorStore", "ParlorRooms",
                                                         "ParlorLoop", "ParlorMedia", "ParlorMediaClient", "ParlorSRTP", "COpenSSL", "ParlorPostgres",
                                                         "PostgresTestCluster", "ParlorRoomsSQLite", "ParlorRecording"]),
    ],
    swiftLanguageModes: [.v6]
)
