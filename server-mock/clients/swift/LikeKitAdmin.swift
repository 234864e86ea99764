// The mock server's admin client: typed calls to the admin API that
// `likekit-server --admin-key K` serves under `/admin`, as its
// `GET /openapi.json` describes them, with the bodies of
// `likekit_proto::admin` as Swift values.
//
// Foundation only; on Linux, URLSession comes from FoundationNetworking.
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// MARK: - The client

/// A client for one server's admin API, sending its key in `X-Admin-Key`.
///
/// ```swift
/// let admin = LikeKitAdmin(baseURL: URL(string: "http://127.0.0.1:8080")!, adminKey: "dev")
/// try await admin.createUser(id: 7, name: "Ana")
/// try await admin.createPost(id: 42)
/// let token = try await admin.mintToken(user: 7)
/// // Every call takes 2 s.
/// try await admin.setFaults(FaultRules(rules: [FaultRule(route: .all, latencyMs: 2000)]))
/// ```
///
/// Tests that share one server add their own rules, tagged, and remove them
/// by tag, leaving other tests' rules and their counters as they are:
///
/// ```swift
/// try await admin.addFaults([FaultRule(route: .like, post: 42, user: 7, failNext: 1, tag: "checkout-7")])
/// // … the test …
/// let mine = try await admin.getFaults(tag: "checkout-7") // its rules, with what each used up
/// let faulted = try await admin.requests(RequestFilter(faultTag: "checkout-7")).entries // what they did
/// try await admin.clearFaults(tag: "checkout-7")
/// try await admin.clearRequests(RequestFilter(user: 7))
/// ```
///
/// A test that cannot wait for the app itself (a UI test driving the app in
/// another process) waits on the server until the app's requests are there
/// and answered:
///
/// ```swift
/// // … the app under test likes post 42 …
/// let journal = try await admin.waitForRequests(RequestFilter(route: .like, post: 42), count: 1, timeout: 10)
/// XCTAssertEqual(journal.met, true, "an answered like within 10 s")
/// ```
///
/// Every method throws ``AdminError``: with the status, code and message of
/// the server's error answer, or without a status when no answer came. (A
/// body JSON cannot hold, such as a NaN probability, throws the
/// `EncodingError` instead, before anything is sent.)
///
/// Answers are read tolerantly: a field this client does not know (one a
/// newer server added) is ignored, while a field of the wrong type or a
/// required one missing throws `unreadable`. A ``Seed``, which only a test
/// writes, is read as strictly as the server reads it: an unknown field is
/// refused.
public final class LikeKitAdmin: Sendable {
    /// One admin operation: its HTTP method and path template.
    public struct Operation: Sendable, Hashable {
        /// The HTTP method, upper case: `GET`, `POST`, `PUT` or `DELETE`.
        public let method: String
        /// The path, with `{id}` where a user's or a post's id goes.
        public let path: String

        /// An operation sent as `method` to `path`.
        public init(method: String, path: String) {
            self.method = method
            self.path = path
        }
    }

    /// The whole admin API, by OpenAPI `operationId`. Every call takes its
    /// method and path from here.
    public static let operations: [String: Operation] = [
        "create_user": Operation(method: "POST", path: "/admin/users"),
        "get_user": Operation(method: "GET", path: "/admin/users/{id}"),
        "create_post": Operation(method: "POST", path: "/admin/posts"),
        "get_post": Operation(method: "GET", path: "/admin/posts/{id}"),
        "set_friends": Operation(method: "PUT", path: "/admin/users/{id}/friends"),
        "mint_token": Operation(method: "POST", path: "/admin/tokens"),
        "set_faults": Operation(method: "PUT", path: "/admin/faults"),
        "add_faults": Operation(method: "POST", path: "/admin/faults"),
        "get_faults": Operation(method: "GET", path: "/admin/faults"),
        "clear_faults": Operation(method: "DELETE", path: "/admin/faults"),
        "requests": Operation(method: "GET", path: "/admin/requests"),
        "clear_requests": Operation(method: "DELETE", path: "/admin/requests"),
        "reset": Operation(method: "POST", path: "/admin/reset"),
        "seed": Operation(method: "POST", path: "/admin/seed"),
    ]

    /// The server's base URL (`http://127.0.0.1:8080`).
    public let baseURL: URL
    /// How long a call may wait with no data from the server, in seconds
    /// (`URLRequest.timeoutInterval`): an idle limit, not one on the whole
    /// call; an answer that keeps arriving, however slowly, is waited for.
    public let timeout: TimeInterval
    private let adminKey: String

    /// A client for the server at `baseURL` (a trailing `/` is ignored)
    /// with its admin key; a call gives up after `timeout` seconds without
    /// data from the server.
    public init(baseURL: URL, adminKey: String, timeout: TimeInterval = 30) {
        self.baseURL = baseURL
        self.adminKey = adminKey
        self.timeout = timeout
    }

    /// `create_user`: creates the user, or renames an existing one.
    ///
    /// - Returns: `.new` (201) or `.existed` (200).
    /// - Throws: ``AdminError``: `bad_user_id`, `bad_name`, …
    @discardableResult
    public func createUser(id: Int64, name: String) async throws -> Created {
        let (status, data) = try await send(
            "create_user", body: JSONEncoder().encode(NewUser(id: id, name: name)))
        _ = try decode(NewUser.self, status, data)
        return status == 201 ? .new : .existed
    }

    /// `create_post`: creates the post; an existing one is left as it is.
    ///
    /// - Returns: `.new` (201) or `.existed` (200).
    /// - Throws: ``AdminError``: `bad_post_id`, …
    @discardableResult
    public func createPost(id: Int64) async throws -> Created {
        let (status, data) = try await send("create_post", body: JSONEncoder().encode(NewPost(id: id)))
        _ = try decode(NewPost.self, status, data)
        return status == 201 ? .new : .existed
    }

    /// `get_user`: the user as stored, with its own (directed) friend list
    /// in ascending order of id.
    ///
    /// - Throws: ``AdminError``: `user_not_found`, `bad_user_id`, …
    public func getUser(id: Int64) async throws -> StoredUser {
        let (status, data) = try await send("get_user", id: id)
        return try decode(StoredUser.self, status, data)
    }

    /// `get_post`: the post as stored (count, version, most recent likers
    /// newest first), read past the server's view cache: a count checked
    /// here right after a client's call is the committed one.
    ///
    /// ```swift
    /// let post = try await admin.getPost(id: 42)
    /// XCTAssertEqual(post.count, 1, "the like was counted once")
    /// ```
    ///
    /// - Throws: ``AdminError``: `post_not_found`, `bad_post_id`, …
    public func getPost(id: Int64) async throws -> StoredPost {
        let (status, data) = try await send("get_post", id: id)
        return try decode(StoredPost.self, status, data)
    }

    /// `set_friends`: replaces `user`'s own (directed) friend list.
    ///
    /// - Throws: ``AdminError``: `user_not_found` (the user or a friend),
    ///   `too_many_friends`, …
    public func setFriends(user: Int64, friends: [Int64]) async throws {
        let (status, data) = try await send(
            "set_friends", id: user, body: JSONEncoder().encode(Friends(friends: friends)))
        _ = try decode(Friends.self, status, data)
    }

    /// `mint_token`: a sign-in token for `user`, valid for `ttlSecs` seconds
    /// from `validFromSecs` seconds from now (a year either way; default
    /// now). Below zero the token was issued then: `mintToken(user: 7,
    /// validFromSecs: -7200)` expired an hour ago, for a test of a client's
    /// token renewal with no wait; above zero it is refused
    /// (`invalid_token`) until then.
    ///
    /// - Returns: the token, for `Authorization: Bearer …`.
    /// - Throws: ``AdminError``: `bad_ttl` outside 1 s to one year,
    ///   `bad_valid_from` outside a year either way of now, …
    public func mintToken(user: Int64, ttlSecs: UInt64 = 3600, validFromSecs: Int64 = 0)
        async throws -> String
    {
        let request = TokenRequest(userId: user, ttlSecs: ttlSecs, validFromSecs: validFromSecs)
        let (status, data) = try await send("mint_token", body: JSONEncoder().encode(request))
        return try decode(TokenResponse.self, status, data).token
    }

    /// `set_faults`: replaces every fault rule. Every rule's counters
    /// start over, other tests' too: tests that share a server use
    /// ``addFaults(_:)``.
    ///
    /// - Returns: the rules now in force, with the seed the server picked
    ///   when `rules` has none.
    /// - Throws: ``AdminError``: `bad_fault_rules`, …
    @discardableResult
    public func setFaults(_ rules: FaultRules) async throws -> FaultRules {
        let (status, data) = try await send("set_faults", body: JSONEncoder().encode(rules))
        return try decode(FaultRules.self, status, data)
    }

    /// `set_faults`: replaces every fault rule with `rules`, drawn from
    /// `seed` (`nil`: one the server picks), as
    /// `setFaults(FaultRules(rules: rules, seed: seed))` does.
    ///
    /// ```swift
    /// try await admin.setFaults([FaultRule(route: .all, latencyMs: 2000)], seed: 42)
    /// ```
    ///
    /// - Returns: the rules now in force, with their seed.
    /// - Throws: ``AdminError``: `bad_fault_rules`, …
    @discardableResult
    public func setFaults(_ rules: [FaultRule], seed: UInt64? = nil) async throws -> FaultRules {
        try await setFaults(FaultRules(rules: rules, seed: seed))
    }

    /// `add_faults`: adds `rules` after the rules in force, which keep
    /// their counters and the seed. Tag them (``FaultRule/tag``) to remove
    /// them with ``clearFaults(tag:)``.
    ///
    /// - Returns: every rule now in force, `rules` last, with the seed and
    ///   what each has used up.
    /// - Throws: ``AdminError``: `bad_fault_rules`; `too_many_rules` (409)
    ///   when the rules in force and `rules` would be more than 256 (nothing
    ///   is added then), …
    @discardableResult
    public func addFaults(_ rules: [FaultRule]) async throws -> FaultRules {
        let (status, data) = try await send(
            "add_faults", body: JSONEncoder().encode(NewFaultRules(rules: rules)))
        return try decode(FaultRules.self, status, data)
    }

    /// `get_faults`: every rule in force, the seed their draws come from,
    /// and what each has used up (``FaultRules/state``). The answer can be
    /// given back to ``setFaults(_:)`` as it is: the server ignores its
    /// state and starts the counters over. A test sharing the server reads
    /// its own rules with ``getFaults(tag:)``.
    ///
    /// - Throws: ``AdminError``.
    public func getFaults() async throws -> FaultRules {
        let (status, data) = try await send("get_faults")
        return try decode(FaultRules.self, status, data)
    }

    /// `get_faults` with a tag: only the rules tagged `tag` and their
    /// state, in their order (none when no rule has it), with the seed.
    /// `tag` is a `String`, never optional: a tag the test left `nil` is a
    /// compile error, not a read of every test's rules.
    ///
    /// - Throws: ``AdminError``: `bad_query` for a tag that is not 1 to 64
    ///   visible ASCII characters, …
    public func getFaults(tag: String) async throws -> FaultRules {
        let (status, data) = try await send("get_faults", query: [URLQueryItem(name: "tag", value: tag)])
        return try decode(FaultRules.self, status, data)
    }

    /// `clear_faults`: removes every fault rule, other tests' too, and the
    /// seed. A test sharing the server removes its own with
    /// ``clearFaults(tag:)``.
    ///
    /// - Returns: the rules left in force: none.
    /// - Throws: ``AdminError``.
    @discardableResult
    public func clearFaults() async throws -> FaultRules {
        let (status, data) = try await send("clear_faults")
        return try decode(FaultRules.self, status, data)
    }

    /// `clear_faults` with a tag: removes only the rules tagged `tag` (none
    /// when no rule has it); the others keep their counters and the seed.
    /// `tag` is a `String`, never optional: a tag the test left `nil` is a
    /// compile error, not the removal of every test's rules.
    ///
    /// - Returns: the rules left in force.
    /// - Throws: ``AdminError``: `bad_query` for a tag that is not 1 to 64
    ///   visible ASCII characters, …
    @discardableResult
    public func clearFaults(tag: String) async throws -> FaultRules {
        let (status, data) = try await send("clear_faults", query: [URLQueryItem(name: "tag", value: tag)])
        return try decode(FaultRules.self, status, data)
    }

    /// `requests`: the request journal's entries that `filter` selects,
    /// oldest first. `RequestFilter(faultTag: "checkout-7")` is what the
    /// rules tagged `checkout-7` did. ``waitForRequests(_:count:timeout:)``
    /// waits on the server until the requests are there and answered.
    ///
    /// - Throws: ``AdminError``: `bad_query` (a `faultTag` that is not 1 to
    ///   64 visible ASCII characters, say), …
    public func requests(_ filter: RequestFilter = .init()) async throws -> Journal {
        let (status, data) = try await send("requests", query: filter.queryItems)
        return try decode(Journal.self, status, data)
    }

    /// `requests` with `wait_for` and `timeout_ms`: the server holds the
    /// answer until at least `count` entries match `filter` and none of
    /// them is in flight (the journal's ``Journal/met`` is then `true`), or
    /// until `timeout` seconds have passed (`false`, with the entries there
    /// were then). For a test that cannot wait for the client itself, such
    /// as a UI test driving the app in another process. `met` is also
    /// `false` at once for a `count` above the journal's capacity, and when
    /// the server begins stopping. The call waits for its answer `timeout`
    /// longer than the client's own ``timeout``.
    ///
    /// ```swift
    /// let journal = try await admin.waitForRequests(RequestFilter(user: 7), count: 2, timeout: 10)
    /// XCTAssertEqual(journal.met, true, "Ana's two requests, answered")
    /// ```
    ///
    /// - Parameters:
    ///   - filter: the entries waited for (the filters of ``requests(_:)``).
    ///   - count: how many of them, at least 1.
    ///   - timeout: how long the server waits at most, in seconds: 5 by
    ///     default, at most 60.
    /// - Throws: ``AdminError``: `bad_query` for a `count` of 0 or a
    ///   `timeout` out of range; `journal_off` (409) from a server that
    ///   keeps no journal, …
    public func waitForRequests(
        _ filter: RequestFilter, count: UInt64, timeout: TimeInterval = 5
    ) async throws -> Journal {
        let milliseconds = (timeout * 1000).rounded()
        // A timeout that is no whole number of milliseconds (NaN, infinite)
        // is sent as it is, for the server to refuse.
        let timeoutMs = Int64(exactly: milliseconds).map { String($0) } ?? String(describing: milliseconds)
        let wait = [
            URLQueryItem(name: "wait_for", value: String(count)),
            URLQueryItem(name: "timeout_ms", value: timeoutMs),
        ]
        let waited = timeout.isFinite ? max(timeout, 0) : 0
        let (status, data) = try await send(
            "requests", query: filter.queryItems + wait, idleTimeout: self.timeout + waited)
        return try decode(Journal.self, status, data)
    }

    /// `clear_requests`: removes the request journal's entries that
    /// `filter` selects (the filters of ``requests(_:)``), so a test
    /// sharing the server removes only its own (`RequestFilter(user: 7)`,
    /// or `RequestFilter(faultTag: "checkout-7")` for what its tagged rules
    /// acted on); without a filter, empties the journal for every test.
    /// `seq` goes on counting.
    ///
    /// - Throws: ``AdminError``: `bad_query`, …
    public func clearRequests(_ filter: RequestFilter = .init()) async throws {
        let (status, data) = try await send("clear_requests", query: filter.queryItems)
        try acknowledged(status, data)
    }

    /// `reset`: drops every like; users, friends and posts stay.
    public func reset() async throws {
        let (status, data) = try await send("reset")
        try acknowledged(status, data)
    }

    /// `seed`: loads a seed document (the `--seed FILE` format); loading
    /// it twice changes nothing. Users are created or renamed and their
    /// friend lists replaced; posts are created and their likers added (a
    /// liker need not be a user).
    ///
    /// - Throws: ``AdminError``: `user_not_found` (404) for a friend that is
    ///   not a user; `bad_name`, `too_many_friends`, `bad_user_id`,
    ///   `bad_post_id` or `bad_json` (400) for a document the server
    ///   refuses (nothing is loaded then), …
    public func seed(_ seed: Seed) async throws {
        let (status, data) = try await send("seed", body: JSONEncoder().encode(seed))
        try acknowledged(status, data)
    }

    // MARK: Transport

    /// Sends the operation `operationId` (with `id` in its path) and
    /// answers the status and body of a 2xx answer; any other answer
    /// throws its ``AdminError``. `idleTimeout` replaces the client's
    /// ``timeout`` for this call (a wait on the server sends nothing until
    /// it ends).
    private func send(
        _ operationId: String,
        id: Int64? = nil,
        query: [URLQueryItem] = [],
        body: Data? = nil,
        idleTimeout: TimeInterval? = nil
    ) async throws -> (Int, Data) {
        guard let operation = LikeKitAdmin.operations[operationId] else {
            preconditionFailure("no admin operation \(operationId) in LikeKitAdmin.operations")
        }
        var path = operation.path
        if let id {
            path = path.replacingOccurrences(of: "{id}", with: String(id))
        }
        var base = baseURL.absoluteString
        while base.hasSuffix("/") {
            base.removeLast()
        }
        guard var components = URLComponents(string: base + path) else {
            throw AdminError(status: nil, code: "bad_url", message: "not a URL: \(base + path)")
        }
        if !query.isEmpty {
            components.queryItems = query
            // A `+` left as it is would reach the server as a space.
            components.percentEncodedQuery = components.percentEncodedQuery?
                .replacingOccurrences(of: "+", with: "%2B")
        }
        guard let url = components.url else {
            throw AdminError(status: nil, code: "bad_url", message: "not a URL: \(base + path)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = operation.method
        let limit = idleTimeout ?? timeout
        #if canImport(FoundationNetworking)
            // swift-corelibs-foundation keeps whole seconds only
            // (`Int(timeoutInterval)`): 0.5 s would be 1 ms, and an
            // infinite one would trap.
            request.timeoutInterval = limit.isFinite ? max(1, limit.rounded(.up)) : 86_400
        #else
            request.timeoutInterval = limit
        #endif
        request.setValue(adminKey, forHTTPHeaderField: "X-Admin-Key")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = body
        }
        let label = "\(operation.method) \(url.absoluteString)"
        let (status, data, location) = try await LikeKitAdmin.exchange(request, label: label)
        if (300..<400).contains(status) {
            let leads = location.map { "redirected to \($0)" } ?? "redirected"
            throw AdminError(
                status: status, code: "unreadable",
                message: "\(label) was \(leads), which is not followed (the admin API has no "
                    + "redirects, and the admin key goes to no other address): if the server "
                    + "is there, give that address as the URL")
        }
        guard (200..<300).contains(status) else {
            throw AdminError(status: status, answer: data)
        }
        return (status, data)
    }

    /// The session every admin call goes through: one that follows no
    /// redirect (``RefuseRedirects``), since `URLSession` copies a
    /// request's headers onto the redirected one and the admin key must
    /// reach no other address.
    private static let session = URLSession(
        configuration: .ephemeral, delegate: RefuseRedirects(), delegateQueue: nil)

    /// One request and its answer's status, body and `Location`; no answer
    /// throws an ``AdminError`` without a status. Cancelling the task
    /// cancels the request.
    private static func exchange(_ request: URLRequest, label: String) async throws -> (
        Int, Data, String?
    ) {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            try Task.checkCancellation()
            throw AdminError(
                status: nil, code: "no_answer", message: "\(label): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw AdminError(status: nil, code: "no_answer", message: "\(label): not an HTTP answer")
        }
        return (http.statusCode, data, http.value(forHTTPHeaderField: "Location"))
    }

    /// Checks `{"ok": true}`, the answer of `reset`, `clear_requests` and
    /// `seed`; any other 2xx answer throws `unreadable`, as in every
    /// language's client.
    private func acknowledged(_ status: Int, _ data: Data) throws {
        guard try decode(Ack.self, status, data).ok else {
            throw AdminError(
                status: status, code: "unreadable",
                message: "Ack.ok is not true: \(String(decoding: data, as: UTF8.self))")
        }
    }

    /// `data` as a `T`; a 2xx answer that is not one throws `unreadable`.
    private func decode<T: Decodable>(_ type: T.Type, _ status: Int, _ data: Data) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw AdminError(
                status: status, code: "unreadable",
                message: "\(error): \(String(decoding: data, as: UTF8.self))")
        }
    }
}

/// Whether an admin "create" made something new (201) or found it there
/// (200).
public enum Created: Sendable, Equatable {
    /// 201: it did not exist.
    case new
    /// 200: it existed (a user is renamed; a post is left as it is).
    case existed
}

/// Why an admin call failed.
public struct AdminError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP status of the server's answer; `nil` when no answer came
    /// (connection refused, timeout).
    public let status: Int?
    /// The server's error code (`bad_name`, `user_not_found`, …);
    /// `unreadable` for an answer that is not the JSON expected, with its
    /// text as the message; `no_answer` when no answer came; `bad_url` when
    /// the base URL and the path make no URL.
    public let code: String
    /// What went wrong, in English.
    public let message: String

    /// An error with these parts.
    public init(status: Int?, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The error of a non-2xx answer: its `{"error": {"code", "message"}}`,
    /// or `unreadable` with the body's text.
    fileprivate init(status: Int, answer: Data) {
        if let body = try? JSONDecoder().decode(ErrorBody.self, from: answer) {
            self.init(status: status, code: body.error.code, message: body.error.message)
        } else {
            self.init(
                status: status, code: "unreadable", message: String(decoding: answer, as: UTF8.self))
        }
    }

    /// `admin API answered 400: bad_name (…)`, or
    /// `admin request failed: no_answer (…)`.
    public var description: String {
        if let status {
            return "admin API answered \(status): \(code) (\(message))"
        }
        return "admin request failed: \(code) (\(message))"
    }
}

extension AdminError: LocalizedError {
    /// The same as ``description``.
    public var errorDescription: String? { description }
}

// MARK: - Bodies of single calls

/// `POST /admin/users`, and its answer.
private struct NewUser: Codable {
    let id: Int64
    let name: String
}

/// `POST /admin/posts`, and its answer.
private struct NewPost: Codable {
    let id: Int64
}

/// `PUT /admin/users/{id}/friends`, and its answer.
private struct Friends: Codable {
    let friends: [Int64]
}

/// `POST /admin/faults`: rules to add after those in force.
private struct NewFaultRules: Codable {
    let rules: [FaultRule]
}

/// `POST /admin/tokens`.
private struct TokenRequest: Codable {
    let userId: Int64
    let ttlSecs: UInt64
    let validFromSecs: Int64

    enum CodingKeys: String, CodingKey {
        case userId = "user_id"
        case ttlSecs = "ttl_secs"
        case validFromSecs = "valid_from_secs"
    }
}

/// The answer to `POST /admin/tokens`.
private struct TokenResponse: Codable {
    let token: String
}

/// `{"ok": true}`
private struct Ack: Codable {
    let ok: Bool
}

/// Every error answer: `{"error": {"code": "…", "message": "…"}}`.
private struct ErrorBody: Codable {
    struct Detail: Codable {
        let code: String
        let message: String
    }

    let error: Detail
}

// MARK: - What the store holds

/// A user as the store holds it: the answer of `get_user`.
public struct StoredUser: Codable, Sendable, Equatable {
    /// The user's id.
    public var id: Int64
    /// The display name.
    public var name: String
    /// The user's own (directed) friend list, in ascending order of id.
    public var friends: [Int64]

    /// User `id` named `name`, with `friends`.
    public init(id: Int64, name: String, friends: [Int64] = []) {
        self.id = id
        self.name = name
        self.friends = friends
    }

    enum CodingKeys: String, CodingKey {
        case id
        case name
        case friends
    }
}

/// A post as the store holds it: the answer of `get_post`, read past the
/// server's view cache.
public struct StoredPost: Codable, Sendable, Equatable {
    /// The post's id.
    public var id: Int64
    /// How many users like it: its like rows, as committed.
    public var count: UInt64
    /// Grows by one with every real change of its likes (a like that added
    /// a row, an unlike that removed one); 0 after a reset.
    public var version: UInt64
    /// Its most recent likers, newest first, at most 100. An unlike removes
    /// its user; the list is not refilled from older likes.
    public var recentLikers: [Int64]

    /// Post `id` with these fields.
    public init(id: Int64, count: UInt64 = 0, version: UInt64 = 0, recentLikers: [Int64] = []) {
        self.id = id
        self.count = count
        self.version = version
        self.recentLikers = recentLikers
    }

    enum CodingKeys: String, CodingKey {
        case id
        case count
        case version
        case recentLikers = "recent_likers"
    }
}

// MARK: - Fault rules

/// Which routes a ``FaultRule`` applies to, or a ``RequestFilter``
/// selects (a journal entry's own route is a ``JournalRoute``).
public enum FaultRoute: String, Codable, Sendable, CaseIterable {
    /// `POST /posts/{id}/like`
    case like
    /// `DELETE /posts/{id}/like`
    case unlike
    /// `GET /posts/{id}/likes`
    case likes
    /// `GET /likes?posts=…`
    case batch
    /// Every public route (`*`).
    case all = "*"

    /// The fault route of the same name as `route`: to filter the journal
    /// by an entry's route (`RequestFilter(route: FaultRoute(entry.route))`).
    public init(_ route: JournalRoute) {
        switch route {
        case .like: self = .like
        case .unlike: self = .unlike
        case .likes: self = .likes
        case .batch: self = .batch
        }
    }
}

/// An HTTP method a ``FaultRule`` may be limited to.
public enum FaultMethod: String, Codable, Sendable, CaseIterable {
    /// `GET`
    case get = "GET"
    /// `POST`
    case post = "POST"
    /// `DELETE`
    case delete = "DELETE"
}

/// When a ``FaultRule`` acts.
public enum FaultPhase: String, Codable, Sendable, CaseIterable {
    /// Before the request is handled: a like or unlike never happens (the
    /// default).
    case before
    /// After it was handled: the write has committed, then the answer is
    /// delayed, replaced, cut or lost.
    case after
}

/// What a ``FaultRule`` does when it fires (after its latency); on the
/// wire, an object tagged by `"kind"`.
public enum FaultAction: Codable, Sendable, Equatable {
    /// Answer `status` (200...599) with `body` (by default the
    /// `injected_fault` error body), and `Retry-After` when given.
    case status(status: UInt16, body: JSONValue? = nil, retryAfterSecs: UInt64? = nil)
    /// Close the connection without an answer.
    case drop
    /// Reset the connection (TCP RST) without an answer.
    case reset
    /// Never answer: hold the request until the server's request timeout.
    case hang
    /// Answer with the first `bytes` bytes of the real answer's body.
    /// Phase `after` only.
    case truncate(bytes: UInt32)
    /// Answer with a body that is not JSON: status 200 in phase
    /// `before`; in phase `after`, the real answer's status.
    case malformed
    /// Send the real answer's body `bytes` at a time, one piece every
    /// `intervalMs`. Phase `after` only.
    case slowBody(bytes: UInt32, intervalMs: UInt64)
    /// Answer 200 with valid JSON of `bytes` bytes (padding), streamed.
    case oversized(bytes: UInt64)

    /// The `"kind"` tag of each action.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        /// ``FaultAction/status(status:body:retryAfterSecs:)``
        case status
        /// ``FaultAction/drop``
        case drop
        /// ``FaultAction/reset``
        case reset
        /// ``FaultAction/hang``
        case hang
        /// ``FaultAction/truncate(bytes:)``
        case truncate
        /// ``FaultAction/malformed``
        case malformed
        /// ``FaultAction/slowBody(bytes:intervalMs:)``
        case slowBody = "slow_body"
        /// ``FaultAction/oversized(bytes:)``
        case oversized
    }

    /// This action's `"kind"` tag.
    public var kind: Kind {
        switch self {
        case .status: return .status
        case .drop: return .drop
        case .reset: return .reset
        case .hang: return .hang
        case .truncate: return .truncate
        case .malformed: return .malformed
        case .slowBody: return .slowBody
        case .oversized: return .oversized
        }
    }

    enum CodingKeys: String, CodingKey {
        case kind
        case status
        case body
        case retryAfterSecs = "retry_after_secs"
        case bytes
        case intervalMs = "interval_ms"
    }

    /// Reads the action its `"kind"` names; an unknown kind, or a missing
    /// or mistyped field, throws.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(Kind.self, forKey: .kind)
        switch kind {
        case .status:
            self = .status(
                status: try container.decode(UInt16.self, forKey: .status),
                body: try container.decodeIfPresent(JSONValue.self, forKey: .body),
                retryAfterSecs: try container.decodeIfPresent(UInt64.self, forKey: .retryAfterSecs))
        case .drop:
            self = .drop
        case .reset:
            self = .reset
        case .hang:
            self = .hang
        case .truncate:
            self = .truncate(bytes: try container.decode(UInt32.self, forKey: .bytes))
        case .malformed:
            self = .malformed
        case .slowBody:
            self = .slowBody(
                bytes: try container.decode(UInt32.self, forKey: .bytes),
                intervalMs: try container.decode(UInt64.self, forKey: .intervalMs))
        case .oversized:
            self = .oversized(bytes: try container.decode(UInt64.self, forKey: .bytes))
        }
    }

    /// Writes `"kind"` and the action's fields (`body` and
    /// `retry_after_secs` only when given).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        switch self {
        case let .status(status, body, retryAfterSecs):
            try container.encode(status, forKey: .status)
            try container.encodeIfPresent(body, forKey: .body)
            try container.encodeIfPresent(retryAfterSecs, forKey: .retryAfterSecs)
        case .drop, .reset, .hang, .malformed:
            break
        case let .truncate(bytes):
            try container.encode(bytes, forKey: .bytes)
        case let .slowBody(bytes, intervalMs):
            try container.encode(bytes, forKey: .bytes)
            try container.encode(intervalMs, forKey: .intervalMs)
        case let .oversized(bytes):
            try container.encode(bytes, forKey: .bytes)
        }
    }
}

/// One fault rule: which requests it matches (`route`, and `method`,
/// `post`, `user` when given), which of their calls it fires on (`nth`,
/// `every`, `first`, `after`, `probability`), and what it does then
/// (`latencyMs` plus up to `jitterMs`, then `dropRate`, `failNext`,
/// `errorRate`, then `action`).
///
/// Encoding writes `route` and only the fields that differ from the
/// server's defaults; decoding fills in the defaults.
public struct FaultRule: Codable, Sendable, Equatable {
    /// The route it applies to.
    public var route: FaultRoute
    /// Only requests with this method. On a route other than `*` it must be
    /// the route's own (`like` POST, `unlike` DELETE, `likes` and `batch`
    /// GET): a rule for another would never fire, and is refused.
    public var method: FaultMethod?
    /// Only requests about this post (a batch read: one that names it).
    public var post: Int64?
    /// Only requests signed in as this user.
    public var user: Int64?
    /// Only the `nth` matching call (1 is the first).
    public var nth: UInt64?
    /// Only every `every`-th matching call.
    public var every: UInt64?
    /// Only the first `first` matching calls.
    public var first: UInt64?
    /// Only the calls after the first `after` matching ones.
    public var after: UInt64?
    /// The chance (0...1) that it fires on a call its conditions select
    /// (default 1: always).
    public var probability: Double
    /// Before the request is handled (default) or after.
    public var phase: FaultPhase
    /// Fixed delay when it fires, in milliseconds (default 0).
    public var latencyMs: UInt64
    /// Extra random delay, uniform in `0...jitterMs` (default 0).
    public var jitterMs: UInt64
    /// Probability (0...1) of answering `status` instead of handling
    /// (default 0).
    public var errorRate: Double
    /// The status `errorRate` and `failNext` answer (default 503); another
    /// without either is refused.
    public var status: UInt16
    /// Probability (0...1) of dropping the connection without an answer
    /// (default 0).
    public var dropRate: Double
    /// Answer `status` to the next `failNext` matching requests (default 0).
    public var failNext: UInt64
    /// What to do when it fires, beyond the fields above.
    public var action: FaultAction?
    /// A name of the test's choosing (1 to 64 visible ASCII characters,
    /// `!` to `~`), so that ``LikeKitAdmin/clearFaults(tag:)`` removes this
    /// test's rules and no other; it changes nothing the rule does.
    public var tag: String?

    /// A rule for `route`; every other field left out has the server's
    /// default, so `FaultRule(route: .like)` injects nothing yet.
    public init(
        route: FaultRoute,
        method: FaultMethod? = nil,
        post: Int64? = nil,
        user: Int64? = nil,
        nth: UInt64? = nil,
        every: UInt64? = nil,
        first: UInt64? = nil,
        after: UInt64? = nil,
        probability: Double = 1,
        phase: FaultPhase = .before,
        latencyMs: UInt64 = 0,
        jitterMs: UInt64 = 0,
        errorRate: Double = 0,
        status: UInt16 = 503,
        dropRate: Double = 0,
        failNext: UInt64 = 0,
        action: FaultAction? = nil,
        tag: String? = nil
    ) {
        self.route = route
        self.method = method
        self.post = post
        self.user = user
        self.nth = nth
        self.every = every
        self.first = first
        self.after = after
        self.probability = probability
        self.phase = phase
        self.latencyMs = latencyMs
        self.jitterMs = jitterMs
        self.errorRate = errorRate
        self.status = status
        self.dropRate = dropRate
        self.failNext = failNext
        self.action = action
        self.tag = tag
    }

    enum CodingKeys: String, CodingKey {
        case route
        case method
        case post
        case user
        case nth
        case every
        case first
        case after
        case probability
        case phase
        case latencyMs = "latency_ms"
        case jitterMs = "jitter_ms"
        case errorRate = "error_rate"
        case status
        case dropRate = "drop_rate"
        case failNext = "fail_next"
        case action
        case tag
    }

    /// Reads a rule; fields left out (or `null`) take the server's
    /// defaults.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        route = try container.decode(FaultRoute.self, forKey: .route)
        method = try container.decodeIfPresent(FaultMethod.self, forKey: .method)
        post = try container.decodeIfPresent(Int64.self, forKey: .post)
        user = try container.decodeIfPresent(Int64.self, forKey: .user)
        nth = try container.decodeIfPresent(UInt64.self, forKey: .nth)
        every = try container.decodeIfPresent(UInt64.self, forKey: .every)
        first = try container.decodeIfPresent(UInt64.self, forKey: .first)
        after = try container.decodeIfPresent(UInt64.self, forKey: .after)
        probability = try container.decodeIfPresent(Double.self, forKey: .probability) ?? 1
        phase = try container.decodeIfPresent(FaultPhase.self, forKey: .phase) ?? .before
        latencyMs = try container.decodeIfPresent(UInt64.self, forKey: .latencyMs) ?? 0
        jitterMs = try container.decodeIfPresent(UInt64.self, forKey: .jitterMs) ?? 0
        errorRate = try container.decodeIfPresent(Double.self, forKey: .errorRate) ?? 0
        status = try container.decodeIfPresent(UInt16.self, forKey: .status) ?? 503
        dropRate = try container.decodeIfPresent(Double.self, forKey: .dropRate) ?? 0
        failNext = try container.decodeIfPresent(UInt64.self, forKey: .failNext) ?? 0
        action = try container.decodeIfPresent(FaultAction.self, forKey: .action)
        tag = try container.decodeIfPresent(String.self, forKey: .tag)
    }

    /// Writes `route` and every field that differs from the server's
    /// default.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(route, forKey: .route)
        try container.encodeIfPresent(method, forKey: .method)
        try container.encodeIfPresent(post, forKey: .post)
        try container.encodeIfPresent(user, forKey: .user)
        try container.encodeIfPresent(nth, forKey: .nth)
        try container.encodeIfPresent(every, forKey: .every)
        try container.encodeIfPresent(first, forKey: .first)
        try container.encodeIfPresent(after, forKey: .after)
        if probability != 1 {
            try container.encode(probability, forKey: .probability)
        }
        if phase != .before {
            try container.encode(phase, forKey: .phase)
        }
        if latencyMs != 0 {
            try container.encode(latencyMs, forKey: .latencyMs)
        }
        if jitterMs != 0 {
            try container.encode(jitterMs, forKey: .jitterMs)
        }
        if errorRate != 0 {
            try container.encode(errorRate, forKey: .errorRate)
        }
        if status != 503 {
            try container.encode(status, forKey: .status)
        }
        if dropRate != 0 {
            try container.encode(dropRate, forKey: .dropRate)
        }
        if failNext != 0 {
            try container.encode(failNext, forKey: .failNext)
        }
        try container.encodeIfPresent(action, forKey: .action)
        try container.encodeIfPresent(tag, forKey: .tag)
    }
}

/// What one fault rule has used up since its rules were set (read-only:
/// the server reports it in ``FaultRules/state``).
public struct RuleState: Codable, Sendable, Equatable {
    /// The requests it matched: its call number so far (what `nth`,
    /// `every`, `first` and `after` count).
    public var matched: UInt64
    /// The calls it fired on: selected, and the probability draw passed
    /// (its latency applied).
    public var fired: UInt64
    /// The requests it acted on (answered, cut or spoiled); the journal
    /// names it as their `faultRule`.
    public var acted: UInt64
    /// For a rule with `failNext`: how many of those failures are left.
    public var failNextLeft: UInt64?
    /// For a rule with `first`: how many of its first calls are still to
    /// come.
    public var firstLeft: UInt64?

    /// A state with these counts.
    public init(
        matched: UInt64 = 0,
        fired: UInt64 = 0,
        acted: UInt64 = 0,
        failNextLeft: UInt64? = nil,
        firstLeft: UInt64? = nil
    ) {
        self.matched = matched
        self.fired = fired
        self.acted = acted
        self.failNextLeft = failNextLeft
        self.firstLeft = firstLeft
    }

    enum CodingKeys: String, CodingKey {
        case matched
        case fired
        case acted
        case failNextLeft = "fail_next_left"
        case firstLeft = "first_left"
    }
}

/// Every fault rule at once: the body of `set_faults` and the answer of
/// `get_faults`, `set_faults` and `clear_faults`.
public struct FaultRules: Codable, Sendable, Equatable {
    /// The seed every probability and jitter is drawn from; `nil` asks the
    /// server to pick one (it reports it).
    public var seed: UInt64?
    /// The rules, applied in order (at most 256).
    public var rules: [FaultRule]
    /// In an answer, what each rule has used up: `state[i]` for `rules[i]`
    /// (empty without rules). Read-only: the server ignores it in
    /// `setFaults`, which starts every counter over, so rules read with
    /// `getFaults` can be set again as they are.
    public var state: [RuleState]

    /// `rules`, drawn from `seed` (`nil`: one the server picks).
    public init(rules: [FaultRule] = [], seed: UInt64? = nil, state: [RuleState] = []) {
        self.rules = rules
        self.seed = seed
        self.state = state
    }

    enum CodingKeys: String, CodingKey {
        case seed
        case rules
        case state
    }

    /// Reads the rules; `state` may be absent (no rules, or a body to send).
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seed = try container.decodeIfPresent(UInt64.self, forKey: .seed)
        rules = try container.decode([FaultRule].self, forKey: .rules)
        state = try container.decodeIfPresent([RuleState].self, forKey: .state) ?? []
    }

    /// Writes the seed when there is one, the rules, and `state` when it is
    /// not empty (as the server does).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(seed, forKey: .seed)
        try container.encode(rules, forKey: .rules)
        if !state.isEmpty {
            try container.encode(state, forKey: .state)
        }
    }
}

// MARK: - The request journal

/// What a like or unlike did, as the request journal records it.
public enum WriteResult: String, Codable, Sendable, CaseIterable {
    /// The (user, post) row changed: the count moved by one.
    case applied
    /// The row was already as asked: nothing changed.
    case unchanged
    /// The handler answered an error: nothing changed (a write answered 500
    /// has no result: it may have committed).
    case refused
}

/// The route a journal entry names: its request's own, so never `*`,
/// which only fault rules and filters use.
public enum JournalRoute: String, Codable, Sendable, CaseIterable {
    /// `POST /posts/{id}/like`
    case like
    /// `DELETE /posts/{id}/like`
    case unlike
    /// `GET /posts/{id}/likes`
    case likes
    /// `GET /likes?posts=…`
    case batch
}

/// What a fault did to a request, as a journal entry's `fault` names it:
/// the ``FaultAction/Kind`` of what acted (`status` also for `errorRate` and
/// `failNext`, `drop` also for `dropRate`), or `latency` for a rule that
/// only delayed the request. The server writes no other value: the set
/// grows only with ``FaultAction``, and so with this client.
public enum JournalFault: String, Codable, Sendable, CaseIterable {
    /// A status answered in place of the real one.
    case status
    /// The connection closed without an answer.
    case drop
    /// The connection reset.
    case reset
    /// No answer: held until the server's request timeout.
    case hang
    /// The answer's body cut short.
    case truncate
    /// A body that is not JSON.
    case malformed
    /// The body sent a few bytes at a time.
    case slowBody = "slow_body"
    /// A 200 answer of valid JSON padded to a given size.
    case oversized
    /// No act: a rule's latency only delayed the request.
    case latency
}

/// One request to a public route, as the request journal lists it.
///
/// Encoding writes every field, the absent ones as `null`. Decoding refuses
/// a `route` of `*` and a `fault` this client does not know, so
/// ``LikeKitAdmin/requests(_:)`` throws `unreadable` for such an entry.
public struct JournalEntry: Codable, Sendable, Equatable {
    /// Its place in the journal: 1, 2, 3, … in order of arrival.
    public var seq: UInt64
    /// Its id, as its answer's `X-Request-Id` gives it: the client's own,
    /// or the one the server made.
    public var requestId: String
    /// When it arrived, in milliseconds since the Unix epoch.
    public var atMs: UInt64
    /// How long it took until its answer (or until the connection was
    /// cut), in milliseconds.
    public var durationMs: UInt64
    /// Its method.
    public var method: FaultMethod
    /// Its route (never `*`).
    public var route: JournalRoute
    /// Its path and query.
    public var path: String
    /// The post it names, or the posts a batch read asks for.
    public var posts: [Int64]
    /// The signed-in user, when the token was valid.
    public var user: Int64?
    /// The answer's status; `nil` when no answer was written.
    public var status: UInt16?
    /// For a like or unlike that reached the handler: what it did (`nil`
    /// when the request timeout cut it short: it may or may not have
    /// committed).
    public var write: WriteResult?
    /// The fault rule that acted on it (its place in the rule set when it
    /// acted: removing rules by tag moves the rules after them up).
    public var faultRule: UInt32?
    /// That rule's `tag`, when it has one: unlike `faultRule`, no removal
    /// changes it, so a test sharing the server finds what its own rules
    /// did by their tag.
    public var faultTag: String?
    /// When that rule acted.
    public var faultPhase: FaultPhase?
    /// What the fault did (see ``JournalFault``).
    public var fault: JournalFault?
    /// Not answered yet: `status`, `durationMs`, `write` and the fault
    /// fields are filled in when its answer is ready.
    public var inFlight: Bool

    /// An entry with these fields.
    public init(
        seq: UInt64,
        requestId: String,
        atMs: UInt64,
        durationMs: UInt64,
        method: FaultMethod,
        route: JournalRoute,
        path: String,
        posts: [Int64],
        user: Int64? = nil,
        status: UInt16? = nil,
        write: WriteResult? = nil,
        faultRule: UInt32? = nil,
        faultTag: String? = nil,
        faultPhase: FaultPhase? = nil,
        fault: JournalFault? = nil,
        inFlight: Bool = false
    ) {
        self.seq = seq
        self.requestId = requestId
        self.atMs = atMs
        self.durationMs = durationMs
        self.method = method
        self.route = route
        self.path = path
        self.posts = posts
        self.user = user
        self.status = status
        self.write = write
        self.faultRule = faultRule
        self.faultTag = faultTag
        self.faultPhase = faultPhase
        self.fault = fault
        self.inFlight = inFlight
    }

    enum CodingKeys: String, CodingKey {
        case seq
        case requestId = "request_id"
        case atMs = "at_ms"
        case durationMs = "duration_ms"
        case method
        case route
        case path
        case posts
        case user
        case status
        case write
        case faultRule = "fault_rule"
        case faultTag = "fault_tag"
        case faultPhase = "fault_phase"
        case fault
        case inFlight = "in_flight"
    }

    /// Reads an entry; the optional fields may be absent or `null`.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        seq = try container.decode(UInt64.self, forKey: .seq)
        requestId = try container.decode(String.self, forKey: .requestId)
        atMs = try container.decode(UInt64.self, forKey: .atMs)
        durationMs = try container.decode(UInt64.self, forKey: .durationMs)
        method = try container.decode(FaultMethod.self, forKey: .method)
        route = try container.decode(JournalRoute.self, forKey: .route)
        path = try container.decode(String.self, forKey: .path)
        posts = try container.decode([Int64].self, forKey: .posts)
        user = try container.decodeIfPresent(Int64.self, forKey: .user)
        status = try container.decodeIfPresent(UInt16.self, forKey: .status)
        write = try container.decodeIfPresent(WriteResult.self, forKey: .write)
        faultRule = try container.decodeIfPresent(UInt32.self, forKey: .faultRule)
        faultTag = try container.decodeIfPresent(String.self, forKey: .faultTag)
        faultPhase = try container.decodeIfPresent(FaultPhase.self, forKey: .faultPhase)
        fault = try container.decodeIfPresent(JournalFault.self, forKey: .fault)
        inFlight = try container.decode(Bool.self, forKey: .inFlight)
    }

    /// Writes every field, as the server does: the absent ones as `null`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seq, forKey: .seq)
        try container.encode(requestId, forKey: .requestId)
        try container.encode(atMs, forKey: .atMs)
        try container.encode(durationMs, forKey: .durationMs)
        try container.encode(method, forKey: .method)
        try container.encode(route, forKey: .route)
        try container.encode(path, forKey: .path)
        try container.encode(posts, forKey: .posts)
        try container.encodeOrNull(user, forKey: .user)
        try container.encodeOrNull(status, forKey: .status)
        try container.encodeOrNull(write, forKey: .write)
        try container.encodeOrNull(faultRule, forKey: .faultRule)
        try container.encodeOrNull(faultTag, forKey: .faultTag)
        try container.encodeOrNull(faultPhase, forKey: .faultPhase)
        try container.encodeOrNull(fault, forKey: .fault)
        try container.encode(inFlight, forKey: .inFlight)
    }
}

/// The answer of `requests`: the entries that match, oldest first.
public struct Journal: Codable, Sendable, Equatable {
    /// The matching entries, oldest first.
    public var entries: [JournalEntry]
    /// How many entries the journal holds at most (`--journal-size`).
    public var capacity: UInt64
    /// How many older entries were dropped to stay within it.
    public var dropped: UInt64
    /// The `seq` of the last request that arrived, whether the filter
    /// matches it or not (0 before the first): read it before the test
    /// acts, then `RequestFilter(since: lastSeq)` selects only what came
    /// after.
    public var lastSeq: UInt64
    /// Only on a read that waited (``LikeKitAdmin/waitForRequests(_:count:timeout:)``):
    /// `true` when the entries it waited for are there, none of them in
    /// flight; `false` when the wait ran out first (or the server began
    /// stopping, or it asked for more than the journal holds). `nil` on a
    /// read that did not wait, and left out of the JSON then.
    public var met: Bool?

    /// A journal page with these fields.
    public init(
        entries: [JournalEntry], capacity: UInt64, dropped: UInt64, lastSeq: UInt64 = 0,
        met: Bool? = nil
    ) {
        self.entries = entries
        self.capacity = capacity
        self.dropped = dropped
        self.lastSeq = lastSeq
        self.met = met
    }

    enum CodingKeys: String, CodingKey {
        case entries
        case capacity
        case dropped
        case lastSeq = "last_seq"
        case met
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        entries = try container.decode([JournalEntry].self, forKey: .entries)
        capacity = try container.decode(UInt64.self, forKey: .capacity)
        dropped = try container.decode(UInt64.self, forKey: .dropped)
        // 0 from a server older than the field (`since: 0` selects every entry).
        lastSeq = try container.decodeIfPresent(UInt64.self, forKey: .lastSeq) ?? 0
        met = try container.decodeIfPresent(Bool.self, forKey: .met)
    }
}

/// The filters of `requests` and `clearRequests` (their query string);
/// every one given must match. A field left `nil` filters nothing:
/// `RequestFilter(user: id)` with a `nil` `id` selects every user's
/// entries, and `clearRequests` with it removes them all, so build a
/// filter from values the test has.
public struct RequestFilter: Codable, Sendable, Equatable {
    /// Only this route (`.all`: every route).
    public var route: FaultRoute?
    /// Only this method.
    public var method: FaultMethod?
    /// Only requests naming this post.
    public var post: Int64?
    /// Only requests signed in as this user.
    public var user: Int64?
    /// Only entries with a larger `seq` (for reading what is new).
    public var since: UInt64?
    /// Only the request whose answer carried this `X-Request-Id`.
    public var requestId: String?
    /// Only the entries whose `faultTag` is this: the requests a rule with
    /// this tag acted on (or delayed), so a test sharing the server reads
    /// or removes what its own tagged rules did (1 to 64 visible ASCII
    /// characters; another is `bad_query`). `fault_tag` on the wire.
    public var faultTag: String?

    /// The filters given; none selects every entry.
    public init(
        route: FaultRoute? = nil,
        method: FaultMethod? = nil,
        post: Int64? = nil,
        user: Int64? = nil,
        since: UInt64? = nil,
        requestId: String? = nil,
        faultTag: String? = nil
    ) {
        self.route = route
        self.method = method
        self.post = post
        self.user = user
        self.since = since
        self.requestId = requestId
        self.faultTag = faultTag
    }

    enum CodingKeys: String, CodingKey {
        case route
        case method
        case post
        case user
        case since
        case requestId = "request_id"
        case faultTag = "fault_tag"
    }

    /// The filters given, as query items (`route=like&post=42`).
    public var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let route {
            items.append(URLQueryItem(name: "route", value: route.rawValue))
        }
        if let method {
            items.append(URLQueryItem(name: "method", value: method.rawValue))
        }
        if let post {
            items.append(URLQueryItem(name: "post", value: String(post)))
        }
        if let user {
            items.append(URLQueryItem(name: "user", value: String(user)))
        }
        if let since {
            items.append(URLQueryItem(name: "since", value: String(since)))
        }
        if let requestId {
            items.append(URLQueryItem(name: "request_id", value: requestId))
        }
        if let faultTag {
            items.append(URLQueryItem(name: "fault_tag", value: faultTag))
        }
        return items
    }
}

// MARK: - Seed documents

/// A seed document (the `--seed FILE` format): users, then posts.
///
/// Decoding refuses a field the document does not have, as the server
/// does, so a misspelt `"freinds"` is an error rather than a user seeded
/// without friends; so do ``SeedUser`` and ``SeedPost``.
public struct Seed: Codable, Sendable, Equatable {
    /// Users with their names and friend lists.
    public var users: [SeedUser]
    /// Posts with the users who already like them.
    public var posts: [SeedPost]

    /// A document with these users and posts.
    public init(users: [SeedUser] = [], posts: [SeedPost] = []) {
        self.users = users
        self.posts = posts
    }

    enum CodingKeys: String, CodingKey {
        case users
        case posts
    }

    /// Reads a document; a list left out is empty, and an unknown field
    /// throws.
    public init(from decoder: Decoder) throws {
        try refuseUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        users = try container.decodeIfPresent([SeedUser].self, forKey: .users) ?? []
        posts = try container.decodeIfPresent([SeedPost].self, forKey: .posts) ?? []
    }
}

/// A user in a ``Seed``.
public struct SeedUser: Codable, Sendable, Equatable {
    /// The user's id.
    public var id: Int64
    /// The display name.
    public var name: String
    /// The user's friends.
    public var friends: [Int64]

    /// User `id` named `name`, with `friends`.
    public init(id: Int64, name: String, friends: [Int64] = []) {
        self.id = id
        self.name = name
        self.friends = friends
    }

    enum CodingKeys: String, CodingKey {
        case id
        case name
        case friends
    }

    /// Reads a user; `friends` left out is empty, and an unknown field
    /// throws.
    public init(from decoder: Decoder) throws {
        try refuseUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        friends = try container.decodeIfPresent([Int64].self, forKey: .friends) ?? []
    }
}

/// A post in a ``Seed``.
public struct SeedPost: Codable, Sendable, Equatable {
    /// The post's id.
    public var id: Int64
    /// Users who like it, oldest first.
    public var likers: [Int64]

    /// Post `id`, liked by `likers`.
    public init(id: Int64, likers: [Int64] = []) {
        self.id = id
        self.likers = likers
    }

    enum CodingKeys: String, CodingKey {
        case id
        case likers
    }

    /// Reads a post; `likers` left out is empty, and an unknown field
    /// throws.
    public init(from decoder: Decoder) throws {
        try refuseUnknownKeys(decoder, CodingKeys.self)
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(Int64.self, forKey: .id)
        likers = try container.decodeIfPresent([Int64].self, forKey: .likers) ?? []
    }
}

/// Any key of a JSON object.
private struct AnyKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        return nil
    }
}

/// Throws for a key of the object `decoder` reads that `Keys` does not
/// name: for the documents a test writes, which the server reads as
/// strictly.
private func refuseUnknownKeys<Keys: CodingKey>(_ decoder: Decoder, _: Keys.Type) throws {
    let object = try decoder.container(keyedBy: AnyKey.self)
    for key in object.allKeys where Keys(stringValue: key.stringValue) == nil {
        throw DecodingError.dataCorruptedError(
            forKey: key, in: object, debugDescription: "unknown field \"\(key.stringValue)\"")
    }
}

// MARK: - Any JSON

/// Any JSON value: a ``FaultAction/status(status:body:retryAfterSecs:)``
/// body, or a document read as is.
///
/// Whole numbers that fit in `Int64` are `.integer`, other numbers
/// `.number`; `==` compares numbers by value, so `1` equals `1.0`.
public enum JSONValue: Codable, Sendable, Equatable {
    /// `null`
    case null
    /// `true` or `false`
    case bool(Bool)
    /// A whole number that fits in `Int64`.
    case integer(Int64)
    /// Any other number.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Reads any JSON value.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else if let value = try? container.decode([String: JSONValue].self) {
            self = .object(value)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a JSON value")
        }
    }

    /// Writes the value as it is.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null:
            try container.encodeNil()
        case let .bool(value):
            try container.encode(value)
        case let .integer(value):
            try container.encode(value)
        case let .number(value):
            try container.encode(value)
        case let .string(value):
            try container.encode(value)
        case let .array(value):
            try container.encode(value)
        case let .object(value):
            try container.encode(value)
        }
    }

    /// Equal JSON: numbers by value, arrays in order, objects by key.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case let (.bool(a), .bool(b)):
            return a == b
        case let (.integer(a), .integer(b)):
            return a == b
        case let (.number(a), .number(b)):
            return a == b
        case let (.integer(a), .number(b)):
            return Double(a) == b
        case let (.number(a), .integer(b)):
            return a == Double(b)
        case let (.string(a), .string(b)):
            return a == b
        case let (.array(a), .array(b)):
            return a == b
        case let (.object(a), .object(b)):
            return a == b
        default:
            return false
        }
    }

    /// The field `key` of an object; `nil` for a missing key or a value
    /// that is not an object.
    public subscript(key: String) -> JSONValue? {
        guard case let .object(fields) = self else { return nil }
        return fields[key]
    }

    /// The string, if this is one.
    public var stringValue: String? {
        guard case let .string(value) = self else { return nil }
        return value
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        guard case let .array(value) = self else { return nil }
        return value
    }

    /// The fields, if this is an object.
    public var objectValue: [String: JSONValue]? {
        guard case let .object(value) = self else { return nil }
        return value
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// `true` or `false`.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// A whole number.
    public init(integerLiteral value: Int64) {
        self = .integer(value)
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A number.
    public init(floatLiteral value: Double) {
        self = .number(value)
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object (a repeated key keeps its last value).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension KeyedEncodingContainer {
    /// Writes `value`, or `null` when there is none.
    fileprivate mutating func encodeOrNull<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value {
            try encode(value, forKey: key)
        } else {
            try encodeNil(forKey: key)
        }
    }
}

/// Refuses every redirect: the 3xx itself becomes the answer, which
/// ``LikeKitAdmin`` reports as `unreadable`. A session's delegate, not a
/// task's: swift-corelibs-foundation asks only the session's about a
/// redirect.
///
/// `@unchecked Sendable`: it holds no state (on Linux `NSObject` is not
/// `Sendable`, so the checked form would be refused there).
private final class RefuseRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
