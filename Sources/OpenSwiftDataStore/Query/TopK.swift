/// The `k` first elements of a sequence in an order, without sorting all of it:
/// a bounded max-heap keeps the best `k` seen so far.
/// - Complexity: O(n log k)
@inlinable
public func smallest<Element>(_ k: Int, of elements: [Element], by less: (Element, Element) -> Bool) -> [Element] {
    guard k > 0 else { return [] }
    var heap: [Element] = []
    heap.reserveCapacity(k)

    func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(heap[parent], heap[child]) else { return }
            heap.swapAt(parent, child)
            child = parent
        }
    }

    func siftDown(_ index: Int) {
        var parent = index
        while true {
            var largest = parent
            for child in [2 * parent + 1, 2 * parent + 2] where child < heap.count && less(heap[largest], heap[child]) {
                largest = child
            }
            guard largest != parent else { return }
            heap.swapAt(parent, largest)
            parent = largest
        }
    }

    for element in elements {
        if heap.count < k {
            heap.append(element)
            siftUp(heap.count - 1)
        } else if less(element, heap[0]) {
            heap[0] = element
            siftDown(0)
        }
    }
    return heap.sorted(by: less)
}
