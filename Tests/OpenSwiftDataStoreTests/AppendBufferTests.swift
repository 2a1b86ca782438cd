import Synchronization
import Testing
@testable import OpenSwiftDataStore

/// `AppendBuffer` against arrays: random appends, writes and copies on many buffers
/// sharing storages (as store versions share their columns), each compared whole
/// with its array after every step; and every element it made is destroyed once.
@Suite struct AppendBufferTests {
    /// Live elements of one test (its cases run in parallel).
    final class Census: Sendable {
        let live = Atomic<Int>(0)
    }

    /// An element that counts itself live, so a leak or a double destroy shows.
    final class Tracked: Sendable {
        let value: Int
        let census: Census
        init(_ value: Int, _ census: Census) {
            self.value = value
            self.census = census
            census.live.add(1, ordering: .relaxed)
        }
        deinit { census.live.subtract(1, ordering: .relaxed) }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func randomSharingAgreesWithArrays(seed: UInt64) {
        var rng = SplitMix(seed: seed)
        let census = Census()
        do {
            var buffers: [AppendBuffer<Tracked>] = [[]]
            var arrays: [[Int]] = [[]]
            var next = 0
            for step in 0..<4_000 {
                let i = Int.random(in: 0..<buffers.count, using: &rng)
                switch Int.random(in: 0..<10, using: &rng) {
                case 0, 1:
                    // A new version made from this one: the storage is shared.
                    buffers.append(buffers[i])
                    arrays.append(arrays[i])
                case 2 where !arrays[i].isEmpty:
                    let p = Int.random(in: 0..<arrays[i].count, using: &rng)
                    buffers[i][p] = Tracked(next, census)
                    arrays[i][p] = next
                    next += 1
                case 3 where buffers.count > 1:
                    // A version dropped.
                    buffers.remove(at: i)
                    arrays.remove(at: i)
                case 4:
                    let capacity = arrays[i].count + Int.random(in: 0...40, using: &rng)
                    buffers[i].reserveCapacity(capacity)
                    #expect(buffers[i].capacity >= capacity)
                default:
                    for _ in 0..<Int.random(in: 1...5, using: &rng) {
                        buffers[i].append(Tracked(next, census))
                        arrays[i].append(next)
                        next += 1
                    }
                }
                guard step % 50 == 0 || step == 3_999 else { continue }
                for (buffer, array) in zip(buffers, arrays) {
                    #expect(buffer.count == array.count)
                    #expect(buffer.map(\.value) == array, "step \(step)")
                    #expect(buffer.withUnsafeBufferPointer { $0.map(\.value) } == array)
                }
            }
        }
        #expect(census.live.load(ordering: .relaxed) == 0, "every element destroyed once")
    }

    /// Threads appending to copies of one storage while another reads the original:
    /// one takes the shared slot, the others copy, and nobody sees another's values.
    @Test func concurrentAppendsToCopiesOfOneStorage() async {
        var base = AppendBuffer<String>((0..<100).map { "base \($0)" })
        base.reserveCapacity(4_096)
        let original = base
        let results = await withTaskGroup(of: [String].self) { group in
            for t in 0..<8 {
                group.addTask {
                    var mine = original
                    for i in 0..<500 { mine.append("thread \(t) value \(i)") }
                    return mine.array
                }
            }
            group.addTask {
                // A reader of the published version meanwhile.
                var seen: [String] = []
                for _ in 0..<200 { seen = original.array }
                return seen
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let expectedBase = (0..<100).map { "base \($0)" }
        #expect(results.filter { $0 == expectedBase }.count == 1, "the reader saw the original alone")
        for t in 0..<8 {
            let mine = expectedBase + (0..<500).map { "thread \(t) value \($0)" }
            #expect(results.contains(mine), "thread \(t)")
        }
        #expect(original.array == expectedBase)
        _ = base
    }

    /// Appends at a shared storage's end do not copy: the new version shares it, and
    /// the old one still reads its own count.
    @Test func anAppendAtTheEndSharesTheStorage() {
        var old = AppendBuffer<String>(["a", "b"])
        old.reserveCapacity(8)
        var new = old
        new.append("c")
        #expect(old.array == ["a", "b"])
        #expect(new.array == ["a", "b", "c"])
        #expect(new.withUnsafeBufferPointer { $0.baseAddress } == old.withUnsafeBufferPointer { $0.baseAddress })
        // A second version made from the old one finds the slot taken, and copies.
        var other = old
        other.append("x")
        #expect(other.array == ["a", "b", "x"])
        #expect(new.array == ["a", "b", "c"])
        #expect(other.withUnsafeBufferPointer { $0.baseAddress } != old.withUnsafeBufferPointer { $0.baseAddress })
        // That copy keeps the capacity: failed commits that leave slots taken cannot grow it.
        #expect(other.capacity == old.capacity)
        // A write copies.
        new[0] = "z"
        #expect(old.array == ["a", "b"])
        #expect(new.array == ["z", "b", "c"])
    }
}
