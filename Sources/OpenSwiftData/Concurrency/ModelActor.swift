import Foundation

/// An executor that owns a model context: jobs run where the context may be used.
public protocol ModelExecutor: Executor {
    var modelContext: ModelContext { get }
}

/// A serial executor that owns a model context.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}

/// Runs an actor's jobs one at a time on a private dispatch queue, with the
/// actor's own context.
public final class DefaultSerialModelExecutor: @unchecked Sendable, SerialModelExecutor {
    public let modelContext: ModelContext
    private let queue: DispatchQueue

    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
        self.queue = DispatchQueue(label: "OpenSwiftData.DefaultSerialModelExecutor")
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { unowned.runSynchronously(on: executor) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// An actor with its own model context and serial executor; `@ModelActor` writes
/// the conformance.
public protocol ModelActor: Actor {
    nonisolated var modelContainer: ModelContainer { get }
    nonisolated var modelExecutor: any ModelExecutor { get }
}

extension ModelActor {
    /// The actor runs on its model executor.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        guard let serial = modelExecutor as? any SerialExecutor else {
            preconditionFailure("a ModelActor's modelExecutor must be a SerialExecutor")
        }
        return serial.asUnownedSerialExecutor()
    }

    /// The actor's context.
    public var modelContext: ModelContext { modelExecutor.modelContext }

    /// The model with `id`, if it exists in the store or the context.
    public subscript<T: PersistentModel>(id: PersistentIdentifier, as as: T.Type) -> T? {
        if let registered: T = modelContext.registeredModel(for: id) { return registered }
        let model = modelContext.model(for: id)
        guard !model.isDeleted else { return nil }
        return model as? T
    }
}
