#if canImport(Glibc)
import Glibc
#endif

/// Memory a large bulk build freed, given back to the system.
///
/// Sorting a million index entries takes tens of megabytes for moments (the entries,
/// the radix sort's second buffer). glibc keeps freed blocks of that size in the heap
/// when later blocks sit above them, so the process went on holding them after the
/// save (in M1, its peak size stayed its size). `malloc_trim` hands the free pages
/// back; it walks the heap's free blocks, a millisecond or so, done once a large
/// insert's indexes are built.
enum FreedMemory {
    /// The fewest rows of a bulk insert after which freed memory is given back.
    static let bulkRowsMinimum = 65_536

    static func release() {
        _ = trim?(0)
    }

    /// glibc's `malloc_trim`, looked up once (Swift's Glibc module does not declare it);
    /// nil with another C library.
    private static let trim: (@convention(c) (Int) -> Int32)? = {
        #if canImport(Glibc)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
        #else
        return nil
        #endif
    }()
}
