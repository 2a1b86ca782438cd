import OpenSwiftDataStore

/// Makes the models of one entity over stored rows, for a context.
///
/// A model made from a fetched row needs `ModelBackingData<M>`'s metadata and its
/// `BackingData` witness table. Named in generic code, each is a runtime lookup per
/// model (about 430 instructions together, a tenth of materializing a fault); the
/// maker looks them up once.
///
/// A class, not a protocol: the layout keeps its maker in an optional (it is made
/// last, with the layout), and copying an optional existential out of it cost about
/// 250 instructions per model.
class ModelMaking: @unchecked Sendable {
    /// A model over `row`, or a fault over row `id` of `table` when `row` is nil.
    func make(
        identifier: PersistentIdentifier, layout: EntityLayout, row: Row?, table: Table, id: RowID, generation: UInt64,
        context: ModelContext
    ) -> any PersistentModel {
        preconditionFailure("abstract")
    }
}

final class ModelMaker<M: PersistentModel>: ModelMaking, @unchecked Sendable {
    /// `ModelBackingData<M>`, as its non-generic base: allocating through the stored
    /// metatype (a `required` initializer) looks no metadata up.
    private let backingType: OurBackingData.Type = ModelBackingData<M>.self
    /// The witness table of `ModelBackingData<M>: BackingData`, taken once from an
    /// existential made here: an `any BackingData<M>` is a class reference and this
    /// table, so one is put together without looking the conformance up.
    /// (A pointer to immutable runtime data, the same from every thread.)
    nonisolated(unsafe) private let witnesses: UnsafeRawPointer

    /// `layout` is `M`'s, still being made: the probe only holds it.
    init(layout: EntityLayout) {
        let probe: any BackingData<M> = ModelBackingData<M>(freshWith: layout)
        // (`as` keeps the existential closed: opened, it would be the class reference alone.)
        witnesses = unsafeBitCast(probe as any BackingData<M>, to: (AnyObject, UnsafeRawPointer).self).1
    }

    override func make(
        identifier: PersistentIdentifier, layout: EntityLayout, row: Row?, table: Table, id: RowID, generation: UInt64,
        context: ModelContext
    ) -> any PersistentModel {
        let backing: AnyObject = backingType.init(
            identifier: identifier, layout: layout, row: row, table: table, id: id, generation: generation, context: context)
        return M(backingData: unsafeBitCast((backing, witnesses), to: (any BackingData<M>).self))
    }
}

/// Makes the backing data of models their own initializers create, per model class.
///
/// `ModelBackingData<M>()` in `createBackingData()`, which runs unspecialized, looked
/// up the generic class's metadata, its `BackingData` witness table and then the
/// class's layout for every new model (about 1,200 instructions); one dictionary
/// look-up by class finds all three, kept from the class's first model.
enum FreshBacking {
    private struct Maker: @unchecked Sendable {
        let backingType: OurBackingData.Type
        /// The witness table of `ModelBackingData<M>: BackingData` (see `ModelMaker`).
        let witnesses: UnsafeRawPointer
        let layout: EntityLayout
    }

    private static let makers = Locked<[ObjectIdentifier: Maker]>([:])

    static func make<M: PersistentModel>(for type: M.Type) -> any BackingData<M> {
        let key = ObjectIdentifier(type)
        let maker = makers.withLock { $0[key] } ?? {
            // Made outside the lock: building the layout evaluates the schema's default
            // values, which may make models (of other classes) and come back here.
            let layout = EntityLayout.of(M.self)
            let probe: any BackingData<M> = ModelBackingData<M>(freshWith: layout)
            let made = Maker(
                backingType: ModelBackingData<M>.self,
                witnesses: unsafeBitCast(probe as any BackingData<M>, to: (AnyObject, UnsafeRawPointer).self).1,
                layout: layout)
            return makers.withLock { makers in
                if let known = makers[key] { return known }
                makers[key] = made
                return made
            }
        }()
        let backing: AnyObject = maker.backingType.init(freshWith: maker.layout)
        return unsafeBitCast((backing, maker.witnesses), to: (any BackingData<M>).self)
    }
}
