import Foundation
import Hummingbird
import SwiftData

/// `/changes` as server-sent events (`Accept: text/event-stream`): the change feed
/// live, fed by `ModelContainer.historyTransactions(after:)`, which waits for the
/// next commit once it has sent everything. Over PostgreSQL that includes commits of
/// other servers on the database (PostgresStore wakes on `NOTIFY`), so every server's
/// stream carries every server's saves.
///
/// One event per change (`event: change`, `data:` the change as the JSON form writes
/// it). The last event of a transaction carries `id:`, the transaction's token as
/// `next` is written, so a client that reconnects with `Last-Event-ID` (as
/// `EventSource` does), or asks `?after=` that token, gets every change after the
/// last whole transaction it received: at least once, in order. When history the
/// client has not received was deleted, the stream sends `event: expired` and ends:
/// the client must read the trips again (another failure of the feed, such as the
/// database gone, sends `event: error` and ends).
enum ChangeStream {
    /// The `Last-Event-ID` header's token text, when there is one.
    static func lastEventID(of request: Request) -> String? {
        // (HTTPTypes' field name, which Hummingbird does not export by name.)
        request.headers[.init("Last-Event-ID")!].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether the request asks for the stream rather than a JSON page.
    static func isWanted(by request: Request) -> Bool {
        request.headers[values: .accept].contains { $0.contains("text/event-stream") }
    }

    /// The stream after `token`, ending after `limit` changes when given (else when
    /// the client goes, or the server stops). A comment line every `heartbeat` keeps
    /// proxies from closing a quiet stream, and finds a client that went (its write
    /// fails), so its feed stops waiting.
    static func body(_ container: ModelContainer, after token: DefaultHistoryToken?, limit: Int?) -> ResponseBody {
        ResponseBody { writer in
            let (texts, sink) = AsyncStream.makeStream(of: String.self)
            let feed = Task {
                var sent = 0
                do {
                    for try await transaction in container.historyTransactions(after: token) {
                        sink.yield(try events(of: transaction))
                        sent += transaction.changes.count
                        if let limit, sent >= limit { break }
                    }
                } catch SwiftDataError.historyTokenExpired {
                    sink.yield("event: expired\ndata: history after this token was deleted\n\n")
                } catch {
                    sink.yield("event: error\ndata: the change feed failed\n\n")
                }
                sink.finish()
            }
            let beat = Task {
                while !Task.isCancelled {
                    try await Task.sleep(for: heartbeat)
                    sink.yield(": keep-alive\n\n")
                }
            }
            defer {
                feed.cancel()
                beat.cancel()
            }
            for await text in texts { try await writer.write(ByteBuffer(string: text)) }
            try await writer.finish(nil)
        }
    }

    /// How often a quiet stream sends a comment line.
    static let heartbeat: Duration = .seconds(15)

    /// A transaction's events; a transaction without changes the schema knows is an
    /// event with only an `id:`, which moves the client's last event ID on.
    static func events(of transaction: DefaultHistoryTransaction) throws -> String {
        let changes = ChangeBody.changes(in: transaction)
        let id = "id: \(try ChangeFeed.text(of: transaction.token))\n"
        guard !changes.isEmpty else { return id + "\n" }
        var text = ""
        for (i, change) in changes.enumerated() {
            let data = String(decoding: try JSONEncoder().encode(change), as: UTF8.self)
            text += "event: change\n" + (i == changes.count - 1 ? id : "") + "data: \(data)\n\n"
        }
        return text
    }
}
