import OpenSwiftDataStore

/// Makes the models of one entity over stored rows, for a context.
///
/// A model made from a fetched row needs `ModelBackingData<M>`'s metadata and its
/// `BackingData` witness table. Named in generic code, each is a runtime lookup per
/// model (about 430 instructions together, a tenth of materializing a fault); the
/// maker looks them up once.
///
/// New models' backing data (`createBackingData()`) comes from the same maker, found
/// through the class's layout, for the same reason.
///
/// A class, not a protocol: the layout keeps its maker in an optional (it is made
/// last, with the layout), and copying an optional existential out of it cost about
/// 250 instructions per model.
class ModelMaking: @unchecked Sendable {
    /// A model over `row`, or a fault over row `id` of `table` when `row` is nil;
    /// registered with `context` (unretained) when `registering`: the maker knows the
    /// backing data, which the registry's entry names, without reading it back.
    func make(
        identifier: __owned PersistentIdentifier, layout: __owned EntityLayout, row: __owned Row?, table: __owned Table,
        id: RowID, generation: UInt64, context: ModelContext, registering: Bool
    ) -> any PersistentModel {
        preconditionFailure("abstract")
    }

    /// Backing data with no row yet, over `layout` (the maker's own), for a model its
    /// own initializer makes (`createBackingData()`), with the witness table that makes
    /// it an `any BackingData<M>`: the two parts of that existential.
    func freshBacking(layout: EntityLayout) -> (AnyObject, UnsafeRawPointer) {
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
        identifier: __owned PersistentIdentifier, layout: __owned EntityLayout, row: __owned Row?, table: __owned Table,
        id: RowID, generation: UInt64, context: ModelContext, registering: Bool
    ) -> any PersistentModel {
        let backing: AnyObject = backingType.init(
            identifier: identifier, layout: layout, row: row, table: table, id: id, generation: generation, context: context)
        let model = M(backingData: unsafeBitCast((backing, witnesses), to: (any BackingData<M>).self))
        if registering { context.registry.registerMade(model, backing: ObjectIdentifier(backing), as: identifier) }
        return model
    }

    override func freshBacking(layout: EntityLayout) -> (AnyObject, UnsafeRawPointer) {
        (backingType.init(freshWith: layout), witnesses)
    }
}
