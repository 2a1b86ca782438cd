/// "1 row", "2 rows".
func plural(_ count: Int, _ singular: String, _ pluralForm: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : pluralForm ?? singular + "s")"
}
