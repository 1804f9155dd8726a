import Foundation
import Testing
@testable import ParlorLoop

/// The arena limit `parlor` sets at start, unless the operator's environment already sets one.
@Suite struct MallocArenasTests {
    @Test func twoArenasUnlessTheEnvironmentChoosesThem() {
        #expect(MallocArenas.limit(environment: [:]) == 2)
        #expect(MallocArenas.limit(environment: ["GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "PATH": "/bin"]) == 2)
        #expect(MallocArenas.limit(environment: ["MALLOC_ARENA_MAX": "8"]) == nil)
        #expect(MallocArenas.limit(environment: ["GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0:glibc.malloc.arena_max=4"]) == nil)
    }

    @Test func glibcAcceptsTheLimit() {
        // mallopt returns 1 on success; setting the limit again after threads exist is harmless (glibc ignores it).
        // Under `make asan`/`make tsan` the sanitizer's allocator stands in for glibc's and refuses M_ARENA_MAX.
        let underSanitizer = ProcessInfo.processInfo.environment["PARLOR_SANITIZER"] != nil
        #expect(underSanitizer || MallocArenas.apply(environment: [:]) == 2)
        #expect(MallocArenas.apply(environment: ["MALLOC_ARENA_MAX": "1"]) == nil)
    }
}
