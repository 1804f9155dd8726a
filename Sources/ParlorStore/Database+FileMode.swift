#if canImport(Glibc)
import Glibc
#endif
import CSQLite

extension Database {
    /// The database, its -wal and its -shm hold every room's history: readable by the owner only, like the JWT
    /// secret. SQLite creates -wal and -shm with the mode of the database file, so creating that file 0600 before
    /// SQLite opens it covers new ones; files left by an older version (0644) are narrowed here.
    static func restrictFileModes(of path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StoreError(code: SQLITE_CANTOPEN, message: "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        Glibc.close(fd)
        for file in [path, path + "-wal", path + "-shm"] {
            guard chmod(file, 0o600) != 0 else { continue }
            // Missing is fine (SQLite creates it with the database's mode); anything else means we cannot protect it.
            guard errno != ENOENT else { continue }
            throw StoreError(code: SQLITE_CANTOPEN, message: "cannot make \(file) private (mode 0600): \(String(cString: strerror(errno)))")
        }
    }
}
