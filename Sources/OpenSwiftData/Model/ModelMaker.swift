import OpenSwiftDataStore

/// Makes the models of one entity over stored rows, for a context.
///
/// A model made from a fetched row needs `ModelBackingData<M>`'s metadata. Named in
/// generic code, that is a runtime lookup per model (about 330 instructions, a tenth of
/// materializing a fault); the maker looks it up once and allocates through the stored
/// metatype.
protocol ModelMaking: Sendable {
    /// A model over `row`, or a fault over row `id` of `table` when `row` is nil.
    func make(
        identifier: PersistentIdentifier, layout: EntityLayout, row: Row?, table: Table, id: RowID, generation: UInt64,
        context: ModelContext
    ) -> any PersistentModel
}

final class ModelMaker<M: PersistentModel>: ModelMaking {
    private let backingType = ModelBackingData<M>.self

    func make(
        identifier: PersistentIdentifier, layout: EntityLayout, row: Row?, table: Table, id: RowID, generation: UInt64,
        context: ModelContext
    ) -> any PersistentModel {
        guard let row else {
            return M(backingData: backingType.init(
                identifier: identifier, layout: layout, fault: table, id: id, generation: generation, context: context))
        }
        return M(backingData: backingType.init(
            identifier: identifier, layout: layout, row: row, generation: generation, context: context))
    }
}
