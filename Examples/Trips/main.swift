import SwiftData
print("placeholder")
