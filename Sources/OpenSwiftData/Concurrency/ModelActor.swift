import Foundation

/// An executor that owns a model context: jobs run where the context may be used.
public protocol ModelExecutor: Executor {
    /// The context that jobs on this executor may use.
    var modelContext: ModelContext { get }
}

/// A serial executor that owns a model context.
public protocol SerialModelExecutor: ModelExecutor, SerialExecutor {}

/// Runs an actor's jobs one at a time on a private dispatch queue, with the
/// actor's own context.
public final class DefaultSerialModelExecutor: @unchecked Sendable, SerialModelExecutor {
    /// The context the actor's jobs use; it must be used only on this executor.
    public let modelContext: ModelContext
    private let queue: DispatchQueue

    /// Creates an executor for `modelContext`, with a private serial dispatch queue of
    /// its own.
    public init(modelContext: ModelContext) {
        self.modelContext = modelContext
        self.queue = DispatchQueue(label: "OpenSwiftData.DefaultSerialModelExecutor")
    }

    /// Schedules `job` to run after the jobs already enqueued, on the executor's queue.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { unowned.runSynchronously(on: executor) }
    }

    /// This executor, as the unowned reference the concurrency runtime uses.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// An actor with its own model context and serial executor; `@ModelActor` writes
/// the conformance.
public protocol ModelActor: Actor {
    /// The container whose store the actor's context reads and writes.
    nonisolated var modelContainer: ModelContainer { get }
    /// The executor that runs the actor's jobs and owns its context; it must be a
    /// `SerialExecutor`.
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
