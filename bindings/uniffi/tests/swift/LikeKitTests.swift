// The generated Swift bindings against the real reference server, set up
// through the mock server's admin client (LikeKitTesting), which is checked
// here against the server's OpenAPI document too.
//
// `cargo xtask test --only swift` generates the package, copies this file
// into its Tests/LikeKitTests, starts `likekit-server` and runs `swift test`
// with LIKEKIT_URL and LIKEKIT_ADMIN_KEY set (only where a Swift toolchain
// is installed).
import Foundation
import LikeKitTesting
import XCTest

import LikeKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The server under test: LIKEKIT_URL and LIKEKIT_ADMIN_KEY.
enum TestServer {
    static let url: String = environment("LIKEKIT_URL")
    static let admin = LikeKitAdmin(baseURL: URL(string: url)!, adminKey: environment("LIKEKIT_ADMIN_KEY"))

    private static func environment(_ name: String) -> String {
        guard let value = ProcessInfo.processInfo.environment[name] else {
            fatalError("LIKEKIT_URL and LIKEKIT_ADMIN_KEY are not set (run `cargo xtask test --only swift`)")
        }
        return value
    }

    /// `GET /openapi.json` (no key needed), parsed.
    static func openAPI() async throws -> JSONValue {
        var base = url
        while base.hasSuffix("/") { base.removeLast() }
        let document = try XCTUnwrap(URL(string: base + "/openapi.json"))
        let (status, data) = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Int, Data), Error>) in
            URLSession.shared.dataTask(with: document) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    continuation.resume(returning: ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data()))
                }
            }.resume()
        }
        XCTAssertEqual(status, 200, "GET /openapi.json")
        return try JSONDecoder().decode(JSONValue.self, from: data)
    }
}

/// Fresh ids for the users and posts the tests make.
///
/// `@unchecked Sendable` (`shared` is global state, which Swift 6 wants
/// Sendable): every access to `last` holds `lock`.
final class Ids: @unchecked Sendable {
    private static let shared = Ids()
    private let lock = NSLock()
    private var last: Int64 = 1000

    static func next() -> Int64 { shared.take() }

    private func take() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        last += 1
        return last
    }
}

extension LikeKitAdmin {
    /// A new user named `name` with `friends`: its id.
    func user(_ name: String, friends: [Int64] = []) async throws -> Int64 {
        let id = Ids.next()
        try await createUser(id: id, name: name)
        if !friends.isEmpty { try await setFriends(user: id, friends: friends) }
        return id
    }

    /// A new post: its id.
    func post() async throws -> Int64 {
        let id = Ids.next()
        try await createPost(id: id)
        return id
    }
}

/// Always the same token; none on refresh. Sendable as it is: one `let`.
final class FixedToken: TokenProvider {
    let value: String
    init(_ value: String) { self.value = value }
    func token(refresh: Bool) -> String? { refresh ? nil : value }
}

/// An async token provider: starts with a token the server refuses and
/// renews (through the admin API, as over the network) when asked to.
///
/// `@unchecked Sendable`: LikeKit asks from its threads while the test
/// reads `asked`, and every access to `current` and `askedLog` holds
/// `lock` (in synchronous helpers: `NSLock` is not for async code).
final class RenewingTokens: AsyncTokenProvider, @unchecked Sendable {
    private let lock = NSLock()
    private let user: Int64
    private var current = "not-a-token"
    private var askedLog: [Bool] = []

    init(user: Int64) { self.user = user }

    var asked: [Bool] {
        lock.lock()
        defer { lock.unlock() }
        return askedLog
    }

    func token(refresh: Bool) async -> String? {
        record(refresh)
        if refresh, let fresh = try? await TestServer.admin.mintToken(user: user) {
            update(fresh)
        }
        return read()
    }

    private func record(_ refresh: Bool) {
        lock.lock()
        askedLog.append(refresh)
        lock.unlock()
    }

    private func update(_ token: String) {
        lock.lock()
        current = token
        lock.unlock()
    }

    private func read() -> String {
        lock.lock()
        defer { lock.unlock() }
        return current
    }
}

/// Records every event with the thread it arrived on.
///
/// `@unchecked Sendable`: LikeKit's threads write while the test reads, and
/// every access to the two arrays, reads included, holds `lock`.
final class Recorder: LikeObserver, @unchecked Sendable {
    private let lock = NSCondition()
    private var recordedChanges: [(view: PostView, onMain: Bool)] = []
    private var recordedFailures: [(postId: Int64, wanted: Bool, error: LikeError)] = []

    /// The changes so far (a copy, read under the lock).
    var changes: [(view: PostView, onMain: Bool)] {
        lock.lock()
        defer { lock.unlock() }
        return recordedChanges
    }

    /// The failures so far (a copy, read under the lock).
    var failures: [(postId: Int64, wanted: Bool, error: LikeError)] {
        lock.lock()
        defer { lock.unlock() }
        return recordedFailures
    }

    func onChange(view: PostView) {
        lock.lock()
        recordedChanges.append((view, Thread.isMainThread))
        lock.broadcast()
        lock.unlock()
    }

    func onFailure(postId: Int64, wanted: Bool, error: LikeError) {
        lock.lock()
        recordedFailures.append((postId, wanted, error))
        lock.broadcast()
        lock.unlock()
    }

    func snapshot() -> [(view: PostView, onMain: Bool)] {
        changes
    }

    func awaitChange(timeout: TimeInterval = 5, _ matches: (PostView) -> Bool) -> (view: PostView, onMain: Bool)? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let found = recordedChanges.first(where: { matches($0.view) }) { return found }
            if !lock.wait(until: deadline) { return nil }
        }
    }

    /// `awaitChange` for a test whose client calls into Swift's concurrency
    /// (an async token provider): it polls rather than block a thread of
    /// the cooperative pool, which those calls need to run on.
    func change(timeout: TimeInterval = 5, _ matches: (PostView) -> Bool) async -> (view: PostView, onMain: Bool)? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = changes.first(where: { matches($0.view) }) { return found }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return changes.first(where: { matches($0.view) })
    }

    func awaitFailure(timeout: TimeInterval = 5) -> (postId: Int64, wanted: Bool, error: LikeError)? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let found = recordedFailures.first { return found }
            if !lock.wait(until: deadline) { return nil }
        }
    }
}

/// A token provider that always throws. Sendable as it is: no state.
final class LockedKeychain: TokenProvider {
    struct Locked: Error {}
    func token(refresh: Bool) throws -> String? { throw Locked() }
}

/// An observer that throws on every change. Sendable as it is: no state.
final class ThrowingObserver: LikeObserver {
    struct Bug: Error {}
    func onChange(view: PostView) throws { throw Bug() }
    func onFailure(postId: Int64, wanted: Bool, error: LikeError) throws {}
}

/// What a callback error listener heard.
///
/// `@unchecked Sendable`: LikeKit's threads write while the test reads, and
/// every access to `heard`, reads included, holds `lock`.
final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [(callback: String, reason: String)] = []

    func add(_ callback: String, _ reason: String) {
        lock.lock()
        heard.append((callback, reason))
        lock.unlock()
    }

    /// Everything heard so far (a copy, read under the lock).
    var all: [(callback: String, reason: String)] {
        lock.lock()
        defer { lock.unlock() }
        return heard
    }
}

let fastRetry = LikeClientOptions(retryMinDelayMs: 10, retryMaxDelayMs: 20, maxRetries: 2, retryJitter: false)

final class LikeKitTests: XCTestCase {
    var admin: LikeKitAdmin { TestServer.admin }

    func client(_ options: LikeClientOptions = LikeClientOptions(), user: Int64? = nil) async throws -> LikeClient {
        let viewer: Int64
        if let user {
            viewer = user
        } else {
            viewer = try await admin.user("Ana")
        }
        let token = try await admin.mintToken(user: viewer)
        return try LikeClient(baseUrl: TestServer.url, tokenProvider: FixedToken(token), options: options)
    }

    /// Runs `body` with `rules` in force, and clears them after, whatever
    /// happens.
    func withFaults(_ rules: [FaultRule], _ body: () async throws -> Void) async throws {
        try await admin.setFaults(FaultRules(rules: rules))
        do {
            try await body()
        } catch {
            _ = try? await admin.clearFaults()
            throw error
        }
        try await admin.clearFaults()
    }

    func testOptionsLeftOutAreTheCoresAndDefaultOptionsShowsThem() throws {
        let leftOut = LikeClientOptions()
        XCTAssertNil(leftOut.requestTimeoutMs)
        XCTAssertNil(leftOut.maxRetries)
        let defaults = defaultOptions()
        XCTAssertEqual(defaults.requestTimeoutMs, 10_000)
        XCTAssertEqual(defaults.retryMinDelayMs, 500)
        XCTAssertEqual(defaults.maxRetries, 4)
        XCTAssertNil(defaults.retrySeed)
        _ = try LikeClient(baseUrl: TestServer.url, tokenProvider: nil, options: defaults)
    }

    func testZeroAndNegativeIdsAreInvalidIdBadPostId() async throws {
        let client = try await self.client()
        for bad: Int64 in [0, -1, Int64.min] {
            let expected = "post ids are whole numbers from 1 to 9223372036854775807; got \(bad)"
            let calls: [(String, () throws -> Void)] = [
                ("toggle", { _ = try client.toggle(postId: bad) }),
                ("setLiked", { _ = try client.setLiked(postId: bad, liked: true) }),
                ("view", { _ = try client.view(postId: bad) }),
                ("subscribe", { _ = try client.subscribe(postId: bad, observer: Recorder()) }),
            ]
            for (name, call) in calls {
                XCTAssertThrowsError(try call(), "\(name)(\(bad))") { error in
                    guard let error = error as? LikeError, case .InvalidId = error else {
                        return XCTFail("\(name)(\(bad)): got \(error)")
                    }
                    XCTAssertEqual(error.reason, expected)
                }
            }
            do {
                _ = try await client.refresh(postId: bad)
                XCTFail("refresh(\(bad)): no error")
            } catch let error as LikeError {
                guard case .InvalidId = error else { return XCTFail("refresh(\(bad)): got \(error)") }
                XCTAssertEqual(error.reason, expected)
            }
            let existing = try await admin.post()
            do {
                _ = try await client.refreshMany(postIds: [existing, bad])
                XCTFail("refreshMany(\(bad)): no error")
            } catch let error as LikeError {
                guard case .InvalidId = error else { return XCTFail("refreshMany(\(bad)): got \(error)") }
                XCTAssertEqual(error.reason, expected)
            }
        }
        XCTAssertEqual(client.stats().taps, 0)
        XCTAssertEqual(client.stats().callsSent, 0)
    }

    func testBadBaseUrlIsATypedConfigError() {
        XCTAssertThrowsError(try LikeClient(baseUrl: "not a url")) { error in
            guard case LikeError.Config = error else { return XCTFail("got \(error)") }
        }
    }

    /// A tap's call reaches a ScriptedServer a moment after the tap
    /// returns, so `calls()` read at once may be empty; `waitCalls` waits
    /// for it, and gives those waiting when the time runs out.
    func testWaitCallsReturnsATapsCallThatCallsMayNotShowYet() async throws {
        for _ in 0..<30 {
            let server = ScriptedServer()
            try server.setPost(postId: 42, count: 10, likedByMe: false, friends: [], version: 1)
            let client = try LikeClient.scripted(server: server, options: LikeClientOptions(maxRetries: 0))
            _ = try client.setLiked(postId: 42, liked: true)
            let calls = await server.waitCalls(count: 1, timeoutMs: 5_000)
            XCTAssertEqual(calls.map(\.text), ["like 42 #0"])
            let call = try XCTUnwrap(calls.first)
            XCTAssertTrue(try server.answer(id: call.id, count: 11, likedByMe: true, version: 2))
            let idle = await client.waitIdle(timeoutMs: 5_000)
            XCTAssertTrue(idle)
            XCTAssertEqual(try client.view(postId: 42)?.count, 11)
        }
        let server = ScriptedServer()
        let client = try LikeClient.scripted(server: server, options: LikeClientOptions(maxRetries: 0))
        _ = try client.setLiked(postId: 7, liked: true)
        let fewer = await server.waitCalls(count: 2, timeoutMs: 200)
        XCTAssertEqual(fewer.map(\.text), ["like 7 #0"], "those waiting when the time ran out")
        _ = await client.shutdown(deadlineMs: 0)
    }

    func testOptimisticTapShowsBeforeTheServerAnswers() async throws {
        let post = try await admin.post()
        try await withFaults([FaultRule(route: .like, latencyMs: 1500)]) {
            let client = try await self.client()
            let rec = Recorder()
            let sub = try client.subscribe(postId: post, observer: rec)
            let tapped = Date()
            let view = try client.setLiked(postId: post, liked: true)
            XCTAssertTrue(view.liked && view.pending)
            XCTAssertEqual(view.count, 1)
            XCTAssertEqual(view.line.text, "Liked by you")
            XCTAssertFalse(rec.snapshot().isEmpty, "the observer heard of the tap before it returned")
            let confirmed = rec.awaitChange(timeout: 10) { !$0.pending }
            XCTAssertNotNil(confirmed)
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(tapped), 1.4)
            XCTAssertEqual(confirmed?.view.count, 1)
            sub.cancel()
        }
    }

    func testRollbackCallsOnFailureAndRestoresTheCount() async throws {
        let post = try await admin.post()
        try await withFaults([FaultRule(route: .like, errorRate: 1.0, status: 503)]) {
            let client = try await self.client(fastRetry)
            let rec = Recorder()
            let sub = try client.subscribe(postId: post, observer: rec)
            XCTAssertTrue(try client.setLiked(postId: post, liked: true).liked)
            let failure = try XCTUnwrap(rec.awaitFailure())
            XCTAssertEqual(failure.postId, post)
            XCTAssertTrue(failure.wanted)
            guard case .Server = failure.error else { return XCTFail("got \(failure.error)") }
            let idle = await client.waitIdle(timeoutMs: 10_000)
            XCTAssertTrue(idle)
            let view = try XCTUnwrap(try client.view(postId: post))
            XCTAssertFalse(view.liked)
            XCTAssertEqual(view.count, 0)
            XCTAssertEqual(client.stats().retries, 2)
            XCTAssertEqual(client.stats().rollbacks, 1)
            sub.cancel()
        }
    }

    func testACallbackErrorListenerHearsWhatAnObserverAndATokenProviderThrew() async throws {
        let heard = Heard()
        let options = LikeClientOptions(
            retryMinDelayMs: 10, retryMaxDelayMs: 20, maxRetries: 2, retryJitter: false,
            callbackErrorListener: CallbackErrorHandler { callback, reason in heard.add(callback, reason) })
        let post = try await admin.post()
        let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: LockedKeychain(), options: options)
        let rec = Recorder()
        let sub = try client.subscribe(postId: post, observer: rec)
        let thrower = try client.subscribe(postId: post, observer: ThrowingObserver())
        _ = try client.setLiked(postId: post, liked: true)
        let failure = try XCTUnwrap(rec.awaitFailure(timeout: 10))
        guard case .Unauthorized = failure.error else { return XCTFail("got \(failure.error)") }
        thrower.cancel()
        sub.cancel()
        let callbacks = Set(heard.all.map { $0.callback })
        XCTAssertEqual(callbacks, ["a TokenProvider", "a LikeObserver in on_change"])
        XCTAssertTrue(heard.all.allSatisfy { $0.reason.contains("Locked") || $0.reason.contains("Bug") }, "\(heard.all)")
    }

    func testRapidTapsCoalesce() async throws {
        let post = try await admin.post()
        try await withFaults([FaultRule(route: .like, latencyMs: 300), FaultRule(route: .unlike, latencyMs: 300)]) {
            let client = try await self.client()
            _ = try client.toggle(postId: post)
            _ = try client.toggle(postId: post)
            let last = try client.toggle(postId: post)
            XCTAssertTrue(last.liked)
            let idle = await client.waitIdle(timeoutMs: 10_000)
            XCTAssertTrue(idle)
            let stats = client.stats()
            XCTAssertEqual([stats.taps, stats.callsSent, stats.coalesced], [3, 1, 2])
        }
    }

    func testRefreshReadsTheFriendsLineAndUnknownPostsThrow() async throws {
        let ben = try await admin.user("Ben")
        let cleo = try await admin.user("Cleo", friends: [ben])
        let post = try await admin.post()
        let benClient = try await self.client(user: ben)
        _ = try benClient.setLiked(postId: post, liked: true)
        _ = await benClient.waitIdle(timeoutMs: 10_000)

        let client = try await self.client(user: cleo)
        let view = try await client.refresh(postId: post)
        XCTAssertEqual(view.count, 1)
        XCTAssertEqual(view.friends, ["Ben"])
        XCTAssertEqual(view.line.text, "Liked by Ben")
        do {
            _ = try await client.refresh(postId: Ids.next())
            XCTFail("no error")
        } catch let error as LikeError {
            guard case .NotFound = error else { return XCTFail("got \(error)") }
            XCTAssertTrue(error.reason.contains("not found"))
        }
    }

    func testCallbacksArriveOffTheMainThreadAndCancelStopsThem() async throws {
        let post = try await admin.post()
        let client = try await self.client()
        let rec = Recorder()
        let sub = try client.subscribe(postId: post, observer: rec)
        _ = try client.setLiked(postId: post, liked: true)
        let confirmed = try XCTUnwrap(rec.awaitChange { !$0.pending })
        XCTAssertFalse(confirmed.onMain)
        sub.cancel()
        XCTAssertFalse(sub.isActive())
        let heard = rec.snapshot().count
        _ = try client.setLiked(postId: post, liked: false)
        _ = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertEqual(rec.snapshot().count, heard)
    }

    func testCreatingAndDroppingLeavesNoLiveObjects() async throws {
        let post = try await admin.post()
        let dev = try await admin.user("Dev")
        let tokens = FixedToken(try await admin.mintToken(user: dev))
        let baseline = liveObjects()
        for _ in 0..<10_000 {
            let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens)
            let sub = try client.subscribe(postId: post, observer: Recorder())
            sub.cancel()
        }
        let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens)
        for _ in 0..<10_000 {
            _ = client.subscribeAll(observer: Recorder())
        }
        let deadline = Date().addingTimeInterval(10)
        while liveObjects() != baseline + 1 && Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(liveObjects(), baseline + 1)  // the client above
        // Alive until here: an optimised build may otherwise release it
        // after its last use above, before the count.
        withExtendedLifetime(client) {}
    }

    // MARK: The error's fields (LikeErrorFields.swift)

    /// One answer, one error: no retries, so that each case is one call.
    let noRetry = LikeClientOptions(maxRetries: 0)

    /// The error `call` throws, or a failure when it throws none or another.
    func thrown(_ what: String, _ call: () async throws -> Void) async -> LikeError? {
        do {
            try await call()
            XCTFail("\(what): no error")
        } catch let error as LikeError {
            return error
        } catch {
            XCTFail("\(what): \(error)")
        }
        return nil
    }

    /// The first element `stream` yields within `seconds`, or nil (and the
    /// test fails): the wait is then cancelled, which ends its `for await`,
    /// rather than hanging the run.
    func firstOf<T: Sendable>(
        _ stream: AsyncStream<T>, within seconds: UInt64, _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) async -> T? {
        let waiting = Task { () -> T? in
            for await element in stream {
                return element
            }
            return nil
        }
        let deadline = Task {
            try await Task.sleep(nanoseconds: seconds * 1_000_000_000)
            waiting.cancel()
        }
        let first = await waiting.value
        deadline.cancel()
        if first == nil {
            XCTFail("\(what): nothing within \(seconds) s", file: file, line: line)
        }
        return first
    }

    /// Checks the case and the fields an app reads on any LikeError.
    func assertError(
        _ error: LikeError?, _ variant: String, _ expected: ErrorFields, _ what: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let error else {
            return XCTFail("\(what): no error", file: file, line: line)
        }
        XCTAssertEqual(caseName(error), variant, what, file: file, line: line)
        XCTAssertEqual(ErrorFields(of: error), expected, what, file: file, line: line)
        XCTAssertFalse(error.reason.isEmpty, "\(what): no reason", file: file, line: line)
    }

    func testAnUnknownPostIsNotFoundPostNotFoundNotTransient() async throws {
        let client = try await self.client(noRetry)
        let error = await thrown("refresh") { _ = try await client.refresh(postId: Ids.next()) }
        assertError(error, "NotFound", ErrorFields("post_not_found", false, 404, nil), "refresh")
        XCTAssertTrue(error?.reason.contains("not found") ?? false)
    }

    func testEachAnswerBecomesItsCaseAndFields() async throws {
        let answers: [(String, FaultAction, String, ErrorFields)] = [
            ("503, the mock's error body", .status(status: 503), "Server", ErrorFields("injected_fault", true, 503, nil)),
            ("503 without an error body", .status(status: 503, body: "down"), "Server", ErrorFields("http_503", true, 503, nil)),
            (
                "429, Retry-After 7", .status(status: 429, retryAfterSecs: 7), "RateLimited",
                ErrorFields("rate_limited", true, 429, 7000)
            ),
            (
                "400 bad_query", .status(status: 400, body: ["error": ["code": "bad_query", "message": "posts= is empty"]]),
                "Rejected", ErrorFields("bad_query", false, 400, nil)
            ),
            ("403", .status(status: 403), "Forbidden", ErrorFields("forbidden", false, 403, nil)),
            ("malformed 200", .malformed, "InvalidResponse", ErrorFields("invalid_response", true, nil, nil)),
        ]
        let client = try await self.client(noRetry)
        for (name, action, variant, expected) in answers {
            let post = try await admin.post()
            try await withFaults([FaultRule(route: .likes, post: post, action: action)]) {
                for attempt in 1...2 {  // every read gets it
                    let error = await thrown("\(name), read \(attempt)") { _ = try await client.refresh(postId: post) }
                    assertError(error, variant, expected, "\(name), read \(attempt)")
                }
            }
        }
    }

    func testATapFailingOnA429StormReportsRetryAfter() async throws {
        let post = try await admin.post()
        try await withFaults([FaultRule(route: .like, post: post, action: .status(status: 429, retryAfterSecs: 5))]) {
            let client = try await self.client(noRetry)
            let rec = Recorder()
            let sub = try client.subscribe(postId: post, observer: rec)
            _ = try client.setLiked(postId: post, liked: true)
            let failure = try XCTUnwrap(rec.awaitFailure(timeout: 10))
            assertError(failure.error, "RateLimited", ErrorFields("rate_limited", true, 429, 5000), "onFailure")
            XCTAssertNotNil(rec.awaitChange { !$0.liked && !$0.pending })
            let view = try XCTUnwrap(try client.view(postId: post))
            assertError(view.error, "RateLimited", ErrorFields("rate_limited", true, 429, 5000), "view.error")
            sub.cancel()
        }
    }

    func testATapFailingOn503sPastItsRetriesReportsStatus503() async throws {
        let post = try await admin.post()
        try await withFaults([FaultRule(route: .like, post: post, action: .status(status: 503))]) {
            let client = try await self.client(fastRetry)
            let rec = Recorder()
            let sub = try client.subscribe(postId: post, observer: rec)
            _ = try client.setLiked(postId: post, liked: true)
            let failure = try XCTUnwrap(rec.awaitFailure(timeout: 10))
            assertError(failure.error, "Server", ErrorFields("injected_fault", true, 503, nil), "onFailure")
            XCTAssertEqual(client.stats().retries, 2, "transient: retried")
            sub.cancel()
        }
    }

    /// The `views(postId:)` stream (bindings/uniffi/swift/LikeKitStreams.swift):
    /// the current view, the optimistic one before the held answer, then
    /// the confirmed one; ending the loop ends the subscription.
    func testTheViewsStreamYieldsTheTapAtOnceThenTheAnswer() async throws {
        let post = try await admin.post()
        // Every like of this post is held 2 s before it is handled.
        try await withFaults([FaultRule(route: .like, post: post, latencyMs: 2000)]) {
            let client = try await self.client(fastRetry)
            _ = try await client.refresh(postId: post)
            let baseline = liveObjects()
            let admin = self.admin
            // The stream lives in this function only: its end ends the loop.
            @Sendable func follow() async throws -> [PostView] {
                let views = try client.views(postId: post)
                XCTAssertGreaterThan(liveObjects(), baseline, "subscribed")
                var seen: [PostView] = []
                var tapped = false
                var optimistic = false
                for await view in views {
                    seen.append(view)
                    if !tapped {
                        XCTAssertFalse(view.liked, "the current view first")
                        tapped = true
                        _ = try client.setLiked(postId: post, liked: true)
                    } else if view.liked && view.pending && !optimistic {
                        optimistic = true
                        // The server has not answered the like yet: its
                        // journal holds it in flight, or has not seen it.
                        let likes = try await admin.requests(RequestFilter(route: .like, post: post)).entries
                        XCTAssertTrue(likes.allSatisfy { $0.status == nil }, "answered before the optimistic view: \(likes)")
                    } else if view.liked && !view.pending {
                        break
                    }
                }
                XCTAssertTrue(optimistic, "the optimistic view: \(seen)")
                return seen
            }
            // Past 10 s the loop is cancelled (its `for await` ends) and the
            // checks fail, rather than the test hanging.
            let following = Task { try await follow() }
            let deadline = Task {
                try await Task.sleep(nanoseconds: 10_000_000_000)
                following.cancel()
            }
            let seen = try await following.value
            deadline.cancel()
            XCTAssertEqual(seen.last?.count, 1)
            let released = Date().addingTimeInterval(5)
            while liveObjects() > baseline && Date() < released {
                try await Task.sleep(nanoseconds: 20_000_000)
            }
            XCTAssertEqual(liveObjects(), baseline, "the loop's end ended the subscription")
        }
    }

    /// `LikeFailure`, what `failures()` yields, can be made by hand (for a
    /// preview, or a test of the code that shows it) and compares by its
    /// fields.
    func testALikeFailureIsMadeByHandAndComparesByItsFields() {
        let timeout = LikeError.Timeout(
            reason: "timed out", code: "timeout", isTransient: true, status: nil, retryAfterMs: nil)
        let failure = LikeFailure(postId: 42, wanted: true, error: timeout)
        XCTAssertEqual(failure.postId, 42)
        XCTAssertTrue(failure.wanted)
        XCTAssertEqual(failure.error.code, "timeout")
        XCTAssertEqual(failure, LikeFailure(postId: 42, wanted: true, error: timeout))
        XCTAssertNotEqual(failure, LikeFailure(postId: 42, wanted: false, error: timeout))
        XCTAssertEqual(Set([failure, failure]).count, 1)
    }

    /// An async token provider is awaited, and renews after a 401.
    func testAnAsyncTokenProviderRenewsAfterA401() async throws {
        let user = try await admin.user("Renee")
        let post = try await admin.post()
        let tokens = RenewingTokens(user: user)
        let client = try LikeClient.withAsyncTokenProvider(baseUrl: TestServer.url, tokenProvider: tokens, options: fastRetry)
        let rec = Recorder()
        let sub = try client.subscribe(postId: post, observer: rec)
        _ = try client.setLiked(postId: post, liked: true)
        let answered = await rec.change { !$0.pending }
        let confirmed = try XCTUnwrap(answered).view
        XCTAssertTrue(confirmed.liked)
        XCTAssertEqual(confirmed.count, 1)
        XCTAssertEqual(Array(tokens.asked.prefix(2)), [false, true])
        sub.cancel()
    }

    /// The `failures()` stream hears a like that did not save.
    func testTheFailuresStreamHearsALikeThatDidNotSave() async throws {
        let post = try await admin.post()
        try await withFaults([FaultRule(route: .like, post: post, action: .status(status: 503))]) {
            let client = try await self.client(fastRetry)
            let failures = client.failures()
            _ = try client.setLiked(postId: post, liked: true)
            let first = await firstOf(failures, within: 10, "the like's failure")
            let failure = try XCTUnwrap(first)
            XCTAssertEqual(failure.postId, post)
            XCTAssertTrue(failure.wanted)
            XCTAssertEqual(failure.error.status, 503)
        }
    }

    func testTimeoutNetworkAndUnauthorizedCarryTheirFields() async throws {
        let post = try await admin.post()
        try await withFaults([FaultRule(route: .likes, post: post, latencyMs: 3000)]) {
            let client = try await self.client(LikeClientOptions(requestTimeoutMs: 300, maxRetries: 0))
            let error = await thrown("slow read") { _ = try await client.refresh(postId: post) }
            assertError(error, "Timeout", ErrorFields("timeout", true, nil, nil), "slow read")
        }
        let nobody = try LikeClient(baseUrl: "http://127.0.0.1:1", tokenProvider: nil, options: noRetry)
        let unreachable = await thrown("no server") { _ = try await nobody.refresh(postId: 42) }
        assertError(unreachable, "Network", ErrorFields("network", true, nil, nil), "no server")
        let anonymous = try LikeClient(baseUrl: TestServer.url, tokenProvider: nil, options: noRetry)
        let refused = await thrown("no token") { _ = try await anonymous.refresh(postId: post) }
        assertError(refused, "Unauthorized", ErrorFields("unauthorized", false, 401, nil), "no token")
    }

    func testTheClientsOwnRefusalsCarryTheirFields() async throws {
        let client = try await self.client()
        for bad: Int64 in [0, -1] {
            let error = await thrown("toggle(\(bad))") { _ = try client.toggle(postId: bad) }
            assertError(error, "InvalidId", ErrorFields("bad_post_id", false, nil, nil), "toggle(\(bad))")
            XCTAssertEqual(error?.reason, "post ids are whole numbers from 1 to 9223372036854775807; got \(bad)")
        }
        let stopped = await client.shutdown(deadlineMs: 1_000)
        XCTAssertTrue(stopped)
        let post = try await admin.post()
        let late = await thrown("refresh after shutdown") { _ = try await client.refresh(postId: post) }
        assertError(late, "Shutdown", ErrorFields("shutdown", false, nil, nil), "refresh after shutdown")
        let config = await thrown("a bad URL") { _ = try LikeClient(baseUrl: "not a url") }
        assertError(config, "Config", ErrorFields("config", false, nil, nil), "a bad URL")
        XCTAssertTrue(config?.reason.contains("base URL") ?? false)
    }

    // MARK: The admin client (LikeKitTesting)

    /// Conformance 1: the client's operation table is the admin part of
    /// the server's OpenAPI document, exactly.
    func testAdminOperationsAreTheOpenAPIDocuments() async throws {
        let document = try await TestServer.openAPI()
        let paths = try XCTUnwrap(document["paths"]?.objectValue, "the document has no paths")
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]
        var served = Set<String>()
        for (path, item) in paths where path.hasPrefix("/admin/") {
            for (method, operation) in item.objectValue ?? [:] where methods.contains(method) {
                guard let id = operation["operationId"]?.stringValue else {
                    XCTFail("\(method.uppercased()) \(path) has no operationId")
                    continue
                }
                served.insert("\(id) \(method.uppercased()) \(path)")
            }
        }
        let table = Set(LikeKitAdmin.operations.map { "\($0.key) \($0.value.method) \($0.value.path)" })
        XCTAssertFalse(served.isEmpty, "the document lists no admin operation")
        // No two operations share a method and path.
        let routes = Set(LikeKitAdmin.operations.values.map { "\($0.method) \($0.path)" })
        XCTAssertEqual(routes.count, LikeKitAdmin.operations.count)
        XCTAssertEqual(served.subtracting(table).sorted(), [], "served, not in the client's table")
        XCTAssertEqual(table.subtracting(served).sorted(), [], "in the client's table, not served")
    }

    /// Conformance 2: every schema example decodes into the typed value and
    /// encodes back with the same values, writing only the schema's
    /// properties.
    func testTypedValuesRoundTripTheSchemaExamples() async throws {
        let document = try await TestServer.openAPI()
        let schemas = try XCTUnwrap(document["components"]?["schemas"], "the document has no schemas")
        let types: [(String, (Data) throws -> Data)] = [
            ("FaultRule", { try reencode(FaultRule.self, $0) }),
            ("FaultRules", { try reencode(FaultRules.self, $0) }),
            ("RuleState", { try reencode(RuleState.self, $0) }),
            ("Journal", { try reencode(Journal.self, $0) }),
            ("JournalEntry", { try reencode(JournalEntry.self, $0) }),
            ("Seed", { try reencode(Seed.self, $0) }),
            ("SeedUser", { try reencode(SeedUser.self, $0) }),
            ("SeedPost", { try reencode(SeedPost.self, $0) }),
            ("StoredUser", { try reencode(StoredUser.self, $0) }),
            ("StoredPost", { try reencode(StoredPost.self, $0) }),
        ]
        for (name, roundTrip) in types {
            let schema = try XCTUnwrap(schemas[name], "no schema \(name)")
            let examples = schema["examples"]?.arrayValue ?? []
            XCTAssertFalse(examples.isEmpty, "\(name) has no examples")
            for example in examples {
                let again = try JSONDecoder().decode(JSONValue.self, from: roundTrip(JSONEncoder().encode(example)))
                assertKept(example, in: again, at: name)
                assertKnownKeys(again, schema: schema, schemas: schemas, at: name)
            }
        }
    }

    /// Conformance 3: the client's enums are the schema's.
    func testAdminEnumsAreTheSchemas() async throws {
        let document = try await TestServer.openAPI()
        let schemas = try XCTUnwrap(document["components"]?["schemas"], "the document has no schemas")
        func values(_ schema: JSONValue?) -> [String] {
            (schema?["enum"]?.arrayValue ?? []).compactMap { $0.stringValue }
        }
        let enums: [(String, [String])] = [
            ("FaultRoute", FaultRoute.allCases.map(\.rawValue)),
            ("FaultMethod", FaultMethod.allCases.map(\.rawValue)),
            ("FaultPhase", FaultPhase.allCases.map(\.rawValue)),
            ("WriteResult", WriteResult.allCases.map(\.rawValue)),
        ]
        for (name, mine) in enums {
            let schema = values(schemas[name])
            XCTAssertFalse(schema.isEmpty, "\(name) has no enum")
            XCTAssertEqual(mine.count, schema.count, name)
            XCTAssertEqual(Set(mine), Set(schema), name)
        }
        let alternatives = schemas["FaultAction"]?["oneOf"]?.arrayValue ?? []
        XCTAssertFalse(alternatives.isEmpty, "FaultAction has no oneOf")
        let kinds = alternatives.flatMap { values($0["properties"]?["kind"]) }
        XCTAssertEqual(kinds.count, alternatives.count, "one kind per alternative")
        XCTAssertEqual(Set(kinds), Set(FaultAction.Kind.allCases.map(\.rawValue)))
        XCTAssertEqual(FaultAction.Kind.allCases.count, kinds.count)

        // A journal entry's fault: an action's kind, or latency. Its route:
        // the schema's (the rules' own), but never `*`.
        XCTAssertEqual(JournalFault.allCases.map(\.rawValue), kinds + ["latency"], "JournalFault")
        let route = try XCTUnwrap(schemas["JournalEntry"]?["properties"]?["route"], "JournalEntry has no route")
        let entryRoutes = values(resolveRef(route, schemas)).filter { $0 != "*" }
        XCTAssertFalse(entryRoutes.isEmpty, "JournalEntry.route has no enum")
        XCTAssertEqual(JournalRoute.allCases.map(\.rawValue), entryRoutes, "JournalRoute")
    }

    /// A journal entry decodes each fault as its ``JournalFault`` and each
    /// route as its ``JournalRoute``; a route of `*` or a fault the client
    /// does not know is refused (the client's `decode` throws `unreadable`
    /// for any value `JSONDecoder` refuses).
    func testAJournalEntrysFaultAndRouteDecodeExactly() throws {
        let start =
            #"{"seq": 1, "request_id": "r", "at_ms": 1, "duration_ms": 1, "method": "GET", "path": "/","#
            + #" "posts": [1], "in_flight": false"#
        func entry(_ fields: String) throws -> JournalEntry {
            try JSONDecoder().decode(JournalEntry.self, from: Data((start + ", " + fields + "}").utf8))
        }
        for fault in JournalFault.allCases {
            let decoded = try entry(#""route": "likes", "fault_phase": "after", "fault": "\#(fault.rawValue)""#)
            XCTAssertEqual(decoded.fault, fault)
            XCTAssertEqual(decoded.route, .likes)
            let written = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(decoded))
            XCTAssertEqual(written["fault"], JSONValue.string(fault.rawValue), "written as its raw value")
            let again = try JSONDecoder().decode(JournalEntry.self, from: JSONEncoder().encode(decoded))
            XCTAssertEqual(again, decoded)
        }
        for route in JournalRoute.allCases {
            let decoded = try entry(#""route": "\#(route.rawValue)", "fault": null"#)
            XCTAssertEqual(decoded.route, route)
            XCTAssertNil(decoded.fault)
            XCTAssertEqual(FaultRoute(route).rawValue, route.rawValue, "the fault route of the same name")
        }
        for fields in [#""route": "*""#, #""route": "likes", "fault": "explode""#, #""route": "likes", "fault": "DROP""#] {
            XCTAssertThrowsError(try entry(fields), fields)
        }
    }

    /// Values encode as the server writes them (a rule: only what differs
    /// from its defaults; a journal entry: every field) and refuse JSON of
    /// the wrong type.
    func testAdminValuesEncodeAsTheServerAndRefuseWrongTypes() throws {
        func json<T: Encodable>(_ value: T) throws -> JSONValue {
            try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
        }
        let bare = try json(FaultRule(route: .like))
        XCTAssertEqual(bare, ["route": "like"])
        let asDefaults = FaultRule(route: .all, probability: 1, phase: .before, status: 503, action: .truncate(bytes: 10))
        let action: JSONValue = ["kind": "truncate", "bytes": 10]
        let written = try json(asDefaults)
        XCTAssertEqual(written, ["route": "*", "action": action])
        let tagged = try json(FaultRule(route: .like, tag: "checkout-7"))
        XCTAssertEqual(tagged, ["route": "like", "tag": "checkout-7"])
        let entry = try json(JournalEntry(
            seq: 1, requestId: "r", atMs: 2, durationMs: 3, method: .get, route: .likes, path: "/posts/4/likes", posts: [4]))
        XCTAssertEqual(entry["request_id"], JSONValue.string("r"))
        XCTAssertEqual(entry["user"], JSONValue.null)
        XCTAssertEqual(entry["fault_rule"], JSONValue.null)
        XCTAssertEqual(entry["in_flight"], JSONValue.bool(false))
        let wrong: [(String, (Data) throws -> Data)] = [
            (#"{"route": "nowhere"}"#, { try reencode(FaultRule.self, $0) }),
            (#"{"route": "like", "latency_ms": "slow"}"#, { try reencode(FaultRule.self, $0) }),
            (#"{"route": "like", "tag": 5}"#, { try reencode(FaultRule.self, $0) }),
            (#"{"route": "like", "action": {"kind": "explode"}}"#, { try reencode(FaultRule.self, $0) }),
            (#"{"route": "like", "action": {"kind": "truncate"}}"#, { try reencode(FaultRule.self, $0) }),
            (#"{"rules": {}}"#, { try reencode(FaultRules.self, $0) }),
            (#"{"entries": [], "capacity": -1, "dropped": 0}"#, { try reencode(Journal.self, $0) }),
            (#"{"seq": 1}"#, { try reencode(JournalEntry.self, $0) }),
            (#"{"users": [{"id": "1", "name": "Ana"}]}"#, { try reencode(Seed.self, $0) }),
            // A seed is only ever written by a test: a field it does not have is refused, as the server refuses it.
            (#"{"users": [], "post": []}"#, { try reencode(Seed.self, $0) }),
            (#"{"id": 1, "name": "Ana", "freinds": [2]}"#, { try reencode(SeedUser.self, $0) }),
            (#"{"id": 1, "likes": [2]}"#, { try reencode(SeedPost.self, $0) }),
            (#"{"id": 1, "likers": [true]}"#, { try reencode(SeedPost.self, $0) }),
            (#"{"id": 1, "name": "Ana"}"#, { try reencode(StoredUser.self, $0) }),
            (#"{"id": 1, "count": -1, "version": 0, "recent_likers": []}"#, { try reencode(StoredPost.self, $0) }),
        ]
        for (text, roundTrip) in wrong {
            XCTAssertThrowsError(try roundTrip(Data(text.utf8)), text)
        }
    }

    /// A newer server's answer, with fields this client does not know, is
    /// read without them; a known field of the wrong type, or a missing
    /// one, is still refused.
    func testAdminAnswersAreReadTolerantly() throws {
        let newer = #"""
            {"seed": 7, "rules": [{"route": "like", "nth": 2, "shadow": true,
              "action": {"kind": "truncate", "bytes": 3, "chunked": 1}}],
             "state": [{"matched": 1, "fired": 1, "acted": 0, "skipped": 0}], "generation": 4}
            """#
        let read = try JSONDecoder().decode(FaultRules.self, from: Data(newer.utf8))
        XCTAssertEqual(read, FaultRules(
            rules: [FaultRule(route: .like, nth: 2, action: .truncate(bytes: 3))], seed: 7,
            state: [RuleState(matched: 1, fired: 1, acted: 0)]))
        let post = try JSONDecoder().decode(
            StoredPost.self, from: Data(#"{"id": 1, "count": 2, "version": 3, "recent_likers": [4], "hot": true}"#.utf8))
        XCTAssertEqual(post, StoredPost(id: 1, count: 2, version: 3, recentLikers: [4]))
        for wrong in [#"{"rules": [{"route": "like", "nth": "2", "shadow": true}]}"#, #"{"rules": [{"shadow": true}]}"#] {
            XCTAssertThrowsError(try JSONDecoder().decode(FaultRules.self, from: Data(wrong.utf8)), wrong)
        }
    }

    /// `setFaults` takes the rules and an optional seed, as a list or as
    /// ``FaultRules``.
    func testAdminSetFaultsTakesTheRulesAndASeed() async throws {
        let post = Ids.next() // never requested: the rules act on nothing
        let rules = [FaultRule(route: .likes, post: post, latencyMs: 1), FaultRule(route: .batch, post: post, tag: "as-list")]
        do {
            let seeded = try await admin.setFaults(rules, seed: 42)
            XCTAssertEqual(seeded.rules, rules)
            XCTAssertEqual(seeded.seed, 42)
            let same = try await admin.setFaults(FaultRules(rules: rules, seed: 42))
            XCTAssertEqual(same, seeded, "the same set as FaultRules")
            let picked = try await admin.setFaults(rules)
            XCTAssertEqual(picked.rules, rules)
            XCTAssertNotNil(picked.seed, "the server picks a seed")
            let back = try await admin.getFaults()
            XCTAssertEqual(back, picked)
        } catch {
            _ = try? await admin.clearFaults()
            throw error
        }
        try await admin.clearFaults()
    }

    /// An error answer throws AdminError with the server's status, code and
    /// message; no answer throws it without a status.
    func testAdminErrorsCarryStatusAndCode() async throws {
        do {
            try await admin.createUser(id: Ids.next(), name: "   ")
            XCTFail("a blank name was accepted")
        } catch let error as AdminError {
            XCTAssertEqual(error.status, 400)
            XCTAssertEqual(error.code, "bad_name")
            XCTAssertFalse(error.message.isEmpty)
        }
        // A wrong key is the server's own 401 and message, for a call with a
        // body as for one without.
        let wrongKey = LikeKitAdmin(baseURL: admin.baseURL, adminKey: "not the key")
        let nobodysRule = [FaultRule(route: .likes, post: Ids.next())]
        let calls: [(String, () async throws -> Void)] = [
            ("getFaults", { _ = try await wrongKey.getFaults() }),
            ("reset", { try await wrongKey.reset() }),
            ("createUser", { try await wrongKey.createUser(id: Ids.next(), name: "Ana") }),
            ("createPost", { try await wrongKey.createPost(id: Ids.next()) }),
            ("setFriends", { try await wrongKey.setFriends(user: Ids.next(), friends: []) }),
            ("mintToken", { _ = try await wrongKey.mintToken(user: Ids.next()) }),
            ("setFaults", { try await wrongKey.setFaults(nobodysRule) }),
            ("addFaults", { try await wrongKey.addFaults(nobodysRule) }),
            ("seed", { try await wrongKey.seed(Seed(posts: [SeedPost(id: Ids.next())])) }),
        ]
        for (name, call) in calls {
            do {
                try await call()
                XCTFail("\(name) with a wrong admin key was accepted")
            } catch let error as AdminError {
                XCTAssertEqual(error.status, 401, name)
                XCTAssertEqual(error.code, "bad_admin_key", name)
                XCTAssertTrue(error.message.contains("X-Admin-Key"), "\(name): \(error.message)")
            }
        }
        do {
            let nobody = try XCTUnwrap(URL(string: "http://127.0.0.1:1"))
            try await LikeKitAdmin(baseURL: nobody, adminKey: "k", timeout: 5).reset()
            XCTFail("a server that is not there answered")
        } catch let error as AdminError {
            XCTAssertNil(error.status)
            XCTAssertEqual(error.code, "no_answer")
        }
    }

    /// `getUser` and `getPost` read back what the store holds (friends in
    /// ascending order; count, version and likers newest first); an
    /// unknown user or post throws `user_not_found` or `post_not_found`.
    func testAdminReadsBackUsersAndPostsAsStored() async throws {
        let ana = try await admin.user("Ana")
        let cy = try await admin.user("Cy")
        let ben = try await admin.user("Ben", friends: [cy, ana])
        let benRead = try await admin.getUser(id: ben)
        XCTAssertEqual(benRead, StoredUser(id: ben, name: "Ben", friends: [ana, cy]), "friends in ascending order")
        let cyRead = try await admin.getUser(id: cy)
        XCTAssertEqual(cyRead, StoredUser(id: cy, name: "Cy", friends: []))

        let post = try await admin.post()
        let fresh = try await admin.getPost(id: post)
        XCTAssertEqual(fresh, StoredPost(id: post, count: 0, version: 0, recentLikers: []))
        let anaClient = try await self.client(user: ana)
        let cyClient = try await self.client(user: cy)
        let benClient = try await self.client(user: ben)
        for liker in [anaClient, cyClient, benClient] {
            _ = try liker.setLiked(postId: post, liked: true)
            let idle = await liker.waitIdle(timeoutMs: 10_000)
            XCTAssertTrue(idle)
        }
        // An unlike moves the count back and takes Cy out of the likers.
        _ = try cyClient.setLiked(postId: post, liked: false)
        let unliked = await cyClient.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(unliked)
        let counted = try await admin.getPost(id: post)
        XCTAssertEqual(counted, StoredPost(id: post, count: 2, version: 4, recentLikers: [ben, ana]))

        let missing = Ids.next()
        do {
            _ = try await admin.getUser(id: missing)
            XCTFail("an unknown user was read")
        } catch let error as AdminError {
            XCTAssertEqual(error.status, 404)
            XCTAssertEqual(error.code, "user_not_found")
        }
        do {
            _ = try await admin.getPost(id: missing)
            XCTFail("an unknown post was read")
        } catch let error as AdminError {
            XCTAssertEqual(error.status, 404)
            XCTAssertEqual(error.code, "post_not_found")
        }
    }

    /// `GET` of `path` as the holder of `token`, with `requestId` as its
    /// `X-Request-Id` when given: the status and the id the answer carries.
    private func read(_ path: String, token: String, requestId: String? = nil) async throws -> (Int, String?) {
        try await send("GET", path, token: token, requestId: requestId)
    }

    /// `method` of `path` as the holder of `token` (the public API, with no
    /// client's retries), with `requestId` as its `X-Request-Id` when
    /// given: the status and the id the answer carries.
    private func send(
        _ method: String, _ path: String, token: String, requestId: String? = nil
    ) async throws -> (Int, String?) {
        var base = TestServer.url
        while base.hasSuffix("/") { base.removeLast() }
        var request = URLRequest(url: try XCTUnwrap(URL(string: base + path)))
        request.httpMethod = method
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        if let requestId {
            request.setValue(requestId, forHTTPHeaderField: "X-Request-Id")
        }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Int, String?), Error>) in
            URLSession.shared.dataTask(with: request) { _, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else {
                    let http = response as? HTTPURLResponse
                    continuation.resume(returning: (http?.statusCode ?? 0, http?.value(forHTTPHeaderField: "X-Request-Id")))
                }
            }.resume()
        }
    }

    /// `mintToken(validFromSecs:)` mints a token already expired or not
    /// valid yet, and refuses a start more than a year away.
    func testMintedTokensMayStartInThePastOrTheFuture() async throws {
        let ana = try await admin.user("Ana")
        let post = try await admin.post()
        let path = "/posts/\(post)/likes"
        let expired = try await admin.mintToken(user: ana, validFromSecs: -7200)
        let early = try await admin.mintToken(user: ana, validFromSecs: 60)
        let current = try await admin.mintToken(user: ana, ttlSecs: 3600, validFromSecs: -600)
        let expiredStatus = try await read(path, token: expired).0
        let earlyStatus = try await read(path, token: early).0
        let currentStatus = try await read(path, token: current).0
        XCTAssertEqual([expiredStatus, earlyStatus, currentStatus], [401, 401, 200])
        do {
            _ = try await admin.mintToken(user: ana, validFromSecs: 31_536_001)
            XCTFail("a start more than a year ahead was accepted")
        } catch let error as AdminError {
            XCTAssertEqual(error.status, 400)
            XCTAssertEqual(error.code, "bad_valid_from")
        }
    }

    /// `getFaults` says what each rule has used up; its answer can be set
    /// again as it is, and the counters start over.
    func testGetFaultsSaysWhatEachRuleHasUsedUp() async throws {
        let ana = try await admin.user("Ana")
        let post = try await admin.post()
        let token = try await admin.mintToken(user: ana)
        let path = "/posts/\(post)/likes"
        try await admin.setFaults(FaultRules(rules: [
            FaultRule(route: .likes, post: post, failNext: 2),
            FaultRule(route: .likes, post: post, first: 5, latencyMs: 1),
        ]))
        do {
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(try await read(path, token: token).0)
            }
            XCTAssertEqual(statuses, [503, 503, 200])
            let used = try await admin.getFaults()
            XCTAssertEqual(used.rules.map(\.failNext), [2, 0], "the rules as they were set")
            XCTAssertEqual(used.state, [
                RuleState(matched: 3, fired: 3, acted: 2, failNextLeft: 0),
                // The two failed reads are counted, not fired on: the rule before acted.
                RuleState(matched: 3, fired: 1, acted: 0, firstLeft: 2),
            ])
            let again = try await admin.setFaults(used)
            XCTAssertEqual(again.rules, used.rules)
            XCTAssertEqual(again.state, [RuleState(failNextLeft: 2), RuleState(firstLeft: 5)], "the counters start over")
            let first = try await read(path, token: token).0
            XCTAssertEqual(first, 503)
        } catch {
            _ = try? await admin.clearFaults()
            throw error
        }
        let cleared = try await admin.clearFaults()
        XCTAssertEqual(cleared.state, [])
    }

    /// Tests sharing the server add their rules with `addFaults` and remove
    /// them by tag: test B's used-up `failNext: 1` rule stays used up when
    /// test A adds its own, and removing A's keeps B's with its counters
    /// and the seed.
    func testTestsSharingTheServerAddRulesAndRemoveTheirsByTag() async throws {
        let ana = try await admin.user("Ana")
        let anaPost = try await admin.post()
        let ben = try await admin.user("Ben")
        let benPost = try await admin.post()
        let anaToken = try await admin.mintToken(user: ana)
        let benToken = try await admin.mintToken(user: ben)
        func like(_ post: Int64, _ token: String) async throws -> Int {
            try await send("POST", "/posts/\(post)/like", token: token).0
        }
        // Other tests' rules, if any, come first and stay.
        let others = try await admin.getFaults().rules.count
        do {
            // Test B: Ben's first like of his post fails once.
            let b = try await admin.addFaults([
                FaultRule(route: .like, post: benPost, user: ben, status: 500, failNext: 1, tag: "sharing-b"),
            ])
            let benRule = try XCTUnwrap(b.rules.last)
            XCTAssertEqual(benRule.tag, "sharing-b")
            XCTAssertNotNil(b.seed, "the rules in force have a seed")
            let benFirst = try await like(benPost, benToken)
            XCTAssertEqual(benFirst, 500, "B's first like")

            // Test A adds its own rule meanwhile.
            let a = try await admin.addFaults([
                FaultRule(route: .like, post: anaPost, user: ana, status: 500, failNext: 1, tag: "sharing-a"),
            ])
            XCTAssertEqual(a.seed, b.seed, "the seed stays")
            XCTAssertEqual(a.rules.dropFirst(others).map(\.tag), ["sharing-b", "sharing-a"], "A's rule comes last")
            XCTAssertEqual(
                Array(a.state.dropFirst(others)),
                [RuleState(matched: 1, fired: 1, acted: 1, failNextLeft: 0), RuleState(failNextLeft: 1)],
                "B's rule stays used up; A's is whole")
            let benNext = try await like(benPost, benToken)
            XCTAssertEqual(benNext, 200, "B's next like goes through")
            let anaFirst = try await like(anaPost, anaToken)
            XCTAssertEqual(anaFirst, 500, "A's first like")

            // A is done: only its rule goes; B's keeps its counters and the seed stays.
            let left = try await admin.clearFaults(tag: "sharing-a")
            XCTAssertEqual(left.seed, b.seed)
            XCTAssertEqual(Array(left.rules.dropFirst(others)), [benRule])
            XCTAssertEqual(
                Array(left.state.dropFirst(others)), [RuleState(matched: 2, fired: 2, acted: 1, failNextLeft: 0)],
                "B's counters")
            // The journal names each test's fault by its rule's tag, which
            // stays when a removal moves the rules.
            for (post, tag, place) in [(anaPost, "sharing-a", others + 1), (benPost, "sharing-b", others)] {
                let faulted = try await admin.requests(RequestFilter(route: .like, post: post)).entries
                    .filter { $0.fault != nil }
                XCTAssertEqual(faulted.map(\.faultTag), [tag], "the tag of the faulted like of post \(post)")
                XCTAssertEqual(faulted.map(\.faultRule), [UInt32(place)], "its rule's place when it acted")
            }
            let anaNext = try await like(anaPost, anaToken)
            XCTAssertEqual(anaNext, 200, "A's rule is gone")
            let benUnlike = try await send("DELETE", "/posts/\(benPost)/like", token: benToken).0
            XCTAssertEqual(benUnlike, 200)
            let benAgain = try await like(benPost, benToken)
            XCTAssertEqual(benAgain, 200, "B's rule is still used up")

            let unused = try await admin.clearFaults(tag: "sharing-a")
            XCTAssertEqual(unused.rules, left.rules, "a tag no rule has removes nothing")
            do {
                try await admin.clearFaults(tag: "two words")
                XCTFail("a tag with a space was accepted")
            } catch let error as AdminError {
                XCTAssertEqual(error.status, 400)
                XCTAssertEqual(error.code, "bad_query")
            }
            let none = try await admin.clearFaults(tag: "sharing-b")
            XCTAssertEqual(Array(none.rules.dropFirst(others)), [])
            XCTAssertEqual(none.seed, b.seed, "a removal by tag keeps the seed")
        } catch {
            _ = try? await admin.clearFaults(tag: "sharing-a")
            _ = try? await admin.clearFaults(tag: "sharing-b")
            throw error
        }
        let after = try await admin.getFaults()
        XCTAssertEqual(after.rules.count, others, "the other tests' rules, as they were")
    }

    /// A test sharing the server reads its own rules with `getFaults(tag:)`
    /// and what they did with `RequestFilter(faultTag:)`; a bad tag is
    /// `bad_query` and removes nothing, and removing by `faultTag` keeps
    /// the other test's entries and those no rule touched.
    func testATestReadsItsOwnRulesByTagAndWhatTheyDidByFaultTag() async throws {
        struct Seen: Equatable {
            let user: Int64?
            let status: UInt16?
            let faultTag: String?
            let fault: JournalFault?
        }
        let ana = try await admin.user("Ana")
        let ben = try await admin.user("Ben")
        let post = try await admin.post()
        let anaToken = try await admin.mintToken(user: ana)
        let benToken = try await admin.mintToken(user: ben)
        func seen(_ filter: RequestFilter) async throws -> [Seen] {
            try await admin.requests(filter).entries.map {
                Seen(user: $0.user, status: $0.status, faultTag: $0.faultTag, fault: $0.fault)
            }
        }
        let others = try await admin.getFaults().rules.count
        do {
            // A's rule fails Ana's first read; B's only delays Ben's.
            let inForce = try await admin.addFaults([
                FaultRule(route: .likes, post: post, user: ana, status: 500, failNext: 1, tag: "by-tag-a"),
                FaultRule(route: .likes, post: post, user: ben, latencyMs: 1, tag: "by-tag-b"),
            ])
            let mineInForce = Array(inForce.rules.dropFirst(others))
            XCTAssertEqual(mineInForce.map(\.tag), ["by-tag-a", "by-tag-b"])
            let anaFirst = try await read("/posts/\(post)/likes", token: anaToken).0
            XCTAssertEqual(anaFirst, 500, "A's rule acts on Ana's first read")
            let anaNext = try await read("/posts/\(post)/likes", token: anaToken).0
            XCTAssertEqual(anaNext, 200, "then it is used up")
            let benRead = try await read("/posts/\(post)/likes", token: benToken).0
            XCTAssertEqual(benRead, 200, "B's rule delays Ben's read")

            // Each test reads its own rules, with what each has used up, and the seed.
            let mine = try await admin.getFaults(tag: "by-tag-a")
            XCTAssertEqual(mine.rules, [mineInForce[0]])
            XCTAssertEqual(mine.state, [RuleState(matched: 2, fired: 2, acted: 1, failNextLeft: 0)])
            XCTAssertEqual(mine.seed, inForce.seed)
            let theirs = try await admin.getFaults(tag: "by-tag-b")
            XCTAssertEqual(theirs.rules, [mineInForce[1]])
            let nobodys = try await admin.getFaults(tag: "by-tag-c")
            XCTAssertEqual(nobodys.rules, [], "a tag no rule has")

            // And what its rules did, by their tag.
            let a = Seen(user: ana, status: 500, faultTag: "by-tag-a", fault: .status)
            let b = Seen(user: ben, status: 200, faultTag: "by-tag-b", fault: .latency)
            let untouched = Seen(user: ana, status: 200, faultTag: nil, fault: nil)
            let byA = try await seen(RequestFilter(faultTag: "by-tag-a"))
            XCTAssertEqual(byA, [a])
            let byB = try await seen(RequestFilter(faultTag: "by-tag-b"))
            XCTAssertEqual(byB, [b])
            let both = try await seen(RequestFilter(user: ben, faultTag: "by-tag-a"))
            XCTAssertEqual(both, [], "both filters must match")

            // A bad tag is the server's bad_query, and removes nothing.
            do {
                _ = try await admin.getFaults(tag: "two words")
                XCTFail("getFaults took a tag with a space")
            } catch let error as AdminError {
                XCTAssertEqual(error.status, 400)
                XCTAssertEqual(error.code, "bad_query")
                XCTAssertTrue(error.message.hasPrefix("tag: "), error.message)
            }
            do {
                _ = try await admin.requests(RequestFilter(faultTag: "two words"))
                XCTFail("requests took a faultTag with a space")
            } catch let error as AdminError {
                XCTAssertEqual(error.status, 400)
                XCTAssertEqual(error.code, "bad_query")
                XCTAssertTrue(error.message.hasPrefix("fault_tag: "), error.message)
            }
            do {
                try await admin.clearRequests(RequestFilter(faultTag: ""))
                XCTFail("clearRequests took an empty faultTag")
            } catch let error as AdminError {
                XCTAssertEqual(error.status, 400)
                XCTAssertEqual(error.code, "bad_query")
                XCTAssertTrue(error.message.hasPrefix("fault_tag: "), error.message)
            }
            let everything = try await seen(RequestFilter(post: post))
            XCTAssertEqual(everything, [a, untouched, b])

            // A is done: the entries its rule acted on go; B's and the untouched one stay.
            try await admin.clearRequests(RequestFilter(faultTag: "by-tag-a"))
            let left = try await seen(RequestFilter(post: post))
            XCTAssertEqual(left, [untouched, b])
        } catch {
            _ = try? await admin.clearFaults(tag: "by-tag-a")
            _ = try? await admin.clearFaults(tag: "by-tag-b")
            throw error
        }
        _ = try await admin.clearFaults(tag: "by-tag-a")
        let after = try await admin.clearFaults(tag: "by-tag-b")
        XCTAssertEqual(after.rules.count, others, "the other tests' rules, as they were")
        try await admin.clearRequests(RequestFilter(post: post))
    }

    /// A real server's journal entries decode into their exact route and
    /// fault after rules acted: a rule for every route names the read's own
    /// route; a status, a slow body and a latency are each their
    /// ``JournalFault``.
    func testARealServersEntriesDecodeIntoTheirExactRouteAndFault() async throws {
        struct Typed: Equatable {
            let route: JournalRoute
            let fault: JournalFault?
            let phase: FaultPhase?
            let tag: String?
        }
        let ana = try await admin.user("Ana")
        let ben = try await admin.user("Ben")
        let post = try await admin.post()
        let token = try await admin.mintToken(user: ana)
        let benToken = try await admin.mintToken(user: ben)
        let tag = "exact-journal"
        let others = try await admin.getFaults().rules.count
        do {
            try await admin.addFaults([
                // A rule for every route acts on Ana's first read; the entry names the read's own route.
                FaultRule(route: .all, post: post, user: ana, nth: 1, action: .status(status: 500), tag: tag),
                // Ben's read is slowed after it was answered; Ana's next read is only delayed.
                FaultRule(
                    route: .likes, post: post, user: ben, phase: .after,
                    action: .slowBody(bytes: 4, intervalMs: 1), tag: tag),
                FaultRule(route: .likes, post: post, user: ana, latencyMs: 1, tag: tag),
            ])
            var reads: [Int] = []
            for reader in [token, benToken, token] {
                let status = try await read("/posts/\(post)/likes", token: reader).0
                reads.append(status)
            }
            XCTAssertEqual(reads, [500, 200, 200])
            let liked = try await send("POST", "/posts/\(post)/like", token: token).0
            XCTAssertEqual(liked, 200, "a like no rule acts on")

            let entries = try await admin.requests(RequestFilter(post: post)).entries
            let typed = entries.map { Typed(route: $0.route, fault: $0.fault, phase: $0.faultPhase, tag: $0.faultTag) }
            XCTAssertEqual(typed, [
                Typed(route: .likes, fault: .status, phase: .before, tag: tag),
                Typed(route: .likes, fault: .slowBody, phase: .after, tag: tag),
                Typed(route: .likes, fault: .latency, phase: .before, tag: tag),
                Typed(route: .like, fault: nil, phase: nil, tag: nil),
            ])
            // Filtering by an entry's own route finds it.
            let like = try XCTUnwrap(entries.last)
            let likes = try await admin.requests(RequestFilter(route: FaultRoute(like.route), post: post)).entries
            XCTAssertEqual(likes.map(\.seq), [like.seq])
        } catch {
            _ = try? await admin.clearFaults(tag: tag)
            throw error
        }
        let after = try await admin.clearFaults(tag: tag)
        XCTAssertEqual(after.rules.count, others, "the other tests' rules, as they were")
        try await admin.clearRequests(RequestFilter(post: post))
    }

    /// `addFaults` past 256 rules in force is `too_many_rules` (409), and
    /// adds nothing.
    func testAddingPast256RulesIsTooManyRulesAndAddsNothing() async throws {
        let post = Ids.next()  // never requested: the rules act on nothing
        let others = try await admin.getFaults().rules.count
        do {
            let rules = Array(repeating: FaultRule(route: .likes, post: post, tag: "full-house"), count: 256 - others)
            let full = try await admin.addFaults(rules)
            XCTAssertEqual(full.rules.count, 256)
            do {
                try await admin.addFaults([FaultRule(route: .likes, post: post, tag: "one-too-many")])
                XCTFail("a 257th rule was added")
            } catch let error as AdminError {
                XCTAssertEqual(error.status, 409)
                XCTAssertEqual(error.code, "too_many_rules")
                XCTAssertTrue(error.message.contains("256"), error.message)
            }
            let now = try await admin.getFaults()
            XCTAssertEqual(now, full, "nothing was added")
        } catch {
            _ = try? await admin.clearFaults(tag: "full-house")
            throw error
        }
        let left = try await admin.clearFaults(tag: "full-house")
        XCTAssertEqual(left.rules.count, others)
    }

    /// `clearRequests` with a filter removes only the entries it matches:
    /// another user's stay.
    func testClearRequestsWithAFilterKeepsAnotherUsersEntries() async throws {
        let ana = try await admin.user("Ana")
        let ben = try await admin.user("Ben")
        let post = try await admin.post()
        let anaToken = try await admin.mintToken(user: ana)
        let benToken = try await admin.mintToken(user: ben)
        for token in [anaToken, benToken, anaToken] {
            let status = try await read("/posts/\(post)/likes", token: token).0
            XCTAssertEqual(status, 200)
        }
        let reads = try await admin.requests(RequestFilter(post: post)).entries
        XCTAssertEqual(reads.map(\.user), [ana, ben, ana])

        try await admin.clearRequests(RequestFilter(post: post, user: ana))
        let left = try await admin.requests(RequestFilter(post: post)).entries
        XCTAssertEqual(left.map(\.user), [ben], "Ben's read stays")
        try await admin.clearRequests(RequestFilter(user: ana))
        let again = try await admin.requests(RequestFilter(post: post)).entries
        XCTAssertEqual(again, left, "nothing more of Ana's to remove")
        try await admin.clearRequests(RequestFilter(post: post))
        let none = try await admin.requests(RequestFilter(post: post)).entries
        XCTAssertEqual(none, [])
    }

    /// `waitForRequests` answers once the requests it waits for are there
    /// and answered (`met`), not while one is in flight; a wait for more
    /// than there is runs out (not `met`). Each wait outlasts the client's
    /// own half second.
    func testWaitForRequestsAnswersOnceTheyAreThereAndAnsweredOrWhenItRunsOut() async throws {
        let ana = try await admin.user("Ana")
        let post = try await admin.post()
        let token = try await admin.mintToken(user: ana)
        let key = try XCTUnwrap(ProcessInfo.processInfo.environment["LIKEKIT_ADMIN_KEY"])
        let quick = LikeKitAdmin(baseURL: admin.baseURL, adminKey: key, timeout: 0.5)
        let likes = RequestFilter(route: .like, post: post)
        let tag = "wait-for-requests"
        try await admin.addFaults([FaultRule(route: .like, post: post, latencyMs: 600, tag: tag)])
        do {
            let waiting = Task { () -> (Journal, Date) in
                let journal = try await quick.waitForRequests(likes, count: 1, timeout: 10)
                return (journal, Date())
            }
            try await Task.sleep(nanoseconds: 200_000_000)
            let sent = Date()
            let liked = try await send("POST", "/posts/\(post)/like", token: token).0
            XCTAssertEqual(liked, 200)
            let (journal, answered) = try await waiting.value
            let waited = answered.timeIntervalSince(sent)
            XCTAssertGreaterThanOrEqual(waited, 0.6, "answered \(waited) s after the like was sent, before its latency")
            XCTAssertEqual(journal.met, true)
            XCTAssertEqual(journal.entries.map(\.status), [200])
            XCTAssertEqual(journal.entries.map(\.inFlight), [false])

            // Two asked for, one there: the wait runs out and says so.
            let started = Date()
            let short = try await quick.waitForRequests(likes, count: 2, timeout: 0.8)
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.8)
            XCTAssertEqual(short.met, false)
            XCTAssertEqual(short.entries.count, 1)
            let plain = try await admin.requests(likes)
            XCTAssertNil(plain.met, "a read that does not wait")

            let refusals: [(UInt64, TimeInterval)] = [(0, 1), (1, 61), (1, .infinity)]
            for (count, timeout) in refusals {
                do {
                    _ = try await admin.waitForRequests(likes, count: count, timeout: timeout)
                    XCTFail("waitForRequests(count: \(count), timeout: \(timeout)) was accepted")
                } catch let error as AdminError {
                    XCTAssertEqual(error.status, 400, error.message)
                    XCTAssertEqual(error.code, "bad_query", error.message)
                }
            }
        } catch {
            _ = try? await admin.clearFaults(tag: tag)
            throw error
        }
        try await admin.clearFaults(tag: tag)
        try await admin.clearRequests(RequestFilter(post: post))

        // `met` is read, and written back, only when there is one.
        let waitedJSON = Data(#"{"entries": [], "capacity": 10, "dropped": 0, "met": true}"#.utf8)
        let decoded = try JSONDecoder().decode(Journal.self, from: waitedJSON)
        XCTAssertEqual(decoded, Journal(entries: [], capacity: 10, dropped: 0, met: true))
        let written = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(decoded))
        XCTAssertEqual(written["met"], JSONValue.bool(true))
        let plainJSON = try JSONEncoder().encode(Journal(entries: [], capacity: 10, dropped: 0))
        let plainWritten = try JSONDecoder().decode(JSONValue.self, from: plainJSON)
        XCTAssertNil(plainWritten["met"], "met written without a wait")
    }

    /// The journal names each request by its `X-Request-Id` (the client's
    /// own, or one the server made) and finds it by that id.
    func testTheJournalNamesEachRequestByItsId() async throws {
        let ana = try await admin.user("Ana")
        let post = try await admin.post()
        let token = try await admin.mintToken(user: ana)
        let path = "/posts/\(post)/likes"
        let (status, echoed) = try await read(path, token: token, requestId: "checkout-7f3a")
        XCTAssertEqual(status, 200)
        XCTAssertEqual(echoed, "checkout-7f3a")
        let madeId = try await read(path, token: token).1
        let made = try XCTUnwrap(madeId, "the server's own id")
        let entries = try await admin.requests(RequestFilter(post: post)).entries
        XCTAssertEqual(entries.map(\.requestId), ["checkout-7f3a", made])
        let given = try await admin.requests(RequestFilter(requestId: "checkout-7f3a"))
        XCTAssertEqual(given.entries.map(\.seq), entries.prefix(1).map(\.seq))
        let notALike = try await admin.requests(RequestFilter(route: .like, requestId: made))
        XCTAssertEqual(notALike.entries, [])
    }

    /// Every admin call against the server: creates, friends, tokens,
    /// faults, the journal, seeds and reset.
    func testAdminCallsDriveTheServer() async throws {
        let eve = Ids.next()
        let made = try await admin.createUser(id: eve, name: "Eve")
        XCTAssertEqual(made, .new)
        let renamed = try await admin.createUser(id: eve, name: "Eve")
        XCTAssertEqual(renamed, .existed)
        let post = Ids.next()
        let madePost = try await admin.createPost(id: post)
        XCTAssertEqual(madePost, .new)
        let existingPost = try await admin.createPost(id: post)
        XCTAssertEqual(existingPost, .existed)
        let token = try await admin.mintToken(user: eve, ttlSecs: 60)
        XCTAssertEqual(token.split(separator: ".").count, 3, "a JWT: \(token)")

        // Faults: set with a seed, read back, cleared; without a seed the
        // server picks one.
        let body: JSONValue = ["count": 1, "note": "injected"]
        let answer = FaultAction.status(status: 200, body: body, retryAfterSecs: 2)
        let lost = FaultRule(route: .like, post: post, nth: 1, phase: .after, action: .drop)
        let slow = FaultRule(route: .all, method: .get, user: eve, probability: 0.5, latencyMs: 10, jitterMs: 5, action: answer)
        let trickle = FaultRule(route: .batch, post: post, phase: .after, action: .slowBody(bytes: 4, intervalMs: 1))
        let rules = FaultRules(rules: [lost, slow, trickle], seed: 7)
        let inForce = try await admin.setFaults(rules)
        XCTAssertEqual(inForce.rules, rules.rules)
        XCTAssertEqual(inForce.seed, rules.seed)
        XCTAssertEqual(inForce.state, [RuleState(), RuleState(), RuleState()], "nothing used yet")
        let read = try await admin.getFaults()
        XCTAssertEqual(read, inForce)
        let picked = try await admin.setFaults(FaultRules(rules: [FaultRule(route: .unlike, post: post, latencyMs: 1)]))
        XCTAssertNotNil(picked.seed, "the server reports the seed it picked")
        let cleared = try await admin.clearFaults()
        XCTAssertEqual(cleared.rules, [])
        let none = try await admin.getFaults()
        XCTAssertEqual(none.rules, [])
        do {
            try await admin.setFaults(FaultRules(rules: [FaultRule(route: .like, probability: 2)]))
            XCTFail("a probability of 2 was accepted")
        } catch let error as AdminError {
            XCTAssertEqual(error.status, 400)
            XCTAssertEqual(error.code, "bad_fault_rules")
        }

        // The journal: one like, found by its filters.
        try await admin.clearRequests()
        let client = try await self.client(user: eve)
        _ = try client.setLiked(postId: post, liked: true)
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        let journal = try await admin.requests(RequestFilter(route: .like, post: post))
        XCTAssertEqual(journal.entries.count, 1)
        XCTAssertGreaterThan(journal.capacity, 0)
        let entry = try XCTUnwrap(journal.entries.first)
        XCTAssertEqual(entry.method, .post)
        XCTAssertEqual(entry.route, .like)
        XCTAssertEqual(entry.posts, [post])
        XCTAssertEqual(entry.user, eve)
        XCTAssertEqual(entry.status, 200)
        XCTAssertEqual(entry.write, .applied)
        XCTAssertNil(entry.fault)
        XCTAssertFalse(entry.inFlight)
        XCTAssertFalse(entry.requestId.isEmpty, "the request's X-Request-Id")
        let byId = try await admin.requests(RequestFilter(requestId: entry.requestId))
        XCTAssertEqual(byId.entries.map(\.seq), [entry.seq])
        let byIdAndRoute = try await admin.requests(RequestFilter(route: .unlike, requestId: entry.requestId))
        XCTAssertEqual(byIdAndRoute.entries, [])
        let byUser = try await admin.requests(RequestFilter(route: .all, method: .post, user: eve))
        XCTAssertEqual(byUser.entries.map(\.seq), [entry.seq])
        let unlikes = try await admin.requests(RequestFilter(route: .unlike, post: post))
        XCTAssertEqual(unlikes.entries, [])
        let newer = try await admin.requests(RequestFilter(since: entry.seq))
        XCTAssertTrue(newer.entries.allSatisfy { $0.seq > entry.seq })
        try await admin.clearRequests()
        let emptied = try await admin.requests()
        XCTAssertEqual(emptied.entries, [])

        // A seed document: a friend's like shows in the friends line; reset
        // drops the likes and keeps the users, friends and posts.
        let (gus, hal, seeded) = (Ids.next(), Ids.next(), Ids.next())
        try await admin.seed(Seed(
            users: [SeedUser(id: gus, name: "Gus"), SeedUser(id: hal, name: "Hal", friends: [gus])],
            posts: [SeedPost(id: seeded, likers: [gus])]))
        let halClient = try await self.client(user: hal)
        let seen = try await halClient.refresh(postId: seeded)
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(seen.friends, ["Gus"])
        try await admin.reset()
        let afterReset = try await self.client(user: hal).refresh(postId: seeded)
        XCTAssertEqual(afterReset.count, 0)
        XCTAssertEqual(afterReset.friends, [])
        let stillThere = try await admin.createPost(id: seeded)
        XCTAssertEqual(stillThere, .existed)
    }
}

/// `data` decoded as a `T` and encoded again.
func reencode<T: Codable>(_ type: T.Type, _ data: Data) throws -> Data {
    try JSONEncoder().encode(JSONDecoder().decode(T.self, from: data))
}

/// Every key of `expected` is in `actual` with the same value, recursively.
func assertKept(_ expected: JSONValue, in actual: JSONValue, at path: String) {
    switch expected {
    case let .object(fields):
        guard let kept = actual.objectValue else { return XCTFail("\(path): \(actual) is not an object") }
        for (key, value) in fields {
            guard let again = kept[key] else {
                XCTFail("\(path).\(key): left out")
                continue
            }
            assertKept(value, in: again, at: "\(path).\(key)")
        }
    case let .array(items):
        guard let kept = actual.arrayValue, kept.count == items.count else {
            return XCTFail("\(path): \(actual) is not an array of \(items.count)")
        }
        for (index, item) in items.enumerated() {
            assertKept(item, in: kept[index], at: "\(path)[\(index)]")
        }
    default:
        XCTAssertEqual(actual, expected, path)
    }
}

/// Every key of `value` is one of `schema`'s properties, recursively
/// (through `$ref`, `items` and `oneOf`, a tagged one by its `kind`).
func assertKnownKeys(_ value: JSONValue, schema: JSONValue, schemas: JSONValue, at path: String) {
    let schema = resolveRef(schema, schemas)
    if let options = schema["oneOf"]?.arrayValue {
        let candidates = options.map { resolveRef($0, schemas) }.filter { $0["type"] != JSONValue.string("null") }
        var chosen: JSONValue?
        if candidates.count == 1 {
            chosen = candidates[0]
        } else if let kind = value["kind"] {
            chosen = candidates.first { ($0["properties"]?["kind"]?["enum"]?.arrayValue ?? []).contains(kind) }
        }
        guard let chosen else { return XCTFail("\(path): no alternative of the schema fits \(value)") }
        return assertKnownKeys(value, schema: chosen, schemas: schemas, at: path)
    }
    switch value {
    case let .object(fields):
        // An object without properties (a status body) takes any key.
        guard let properties = schema["properties"]?.objectValue else { return }
        for (key, field) in fields {
            guard let property = properties[key] else {
                XCTFail("\(path): \(key) is not one of the schema's properties")
                continue
            }
            assertKnownKeys(field, schema: property, schemas: schemas, at: "\(path).\(key)")
        }
    case let .array(items):
        guard let itemSchema = schema["items"] else { return }
        for (index, item) in items.enumerated() {
            assertKnownKeys(item, schema: itemSchema, schemas: schemas, at: "\(path)[\(index)]")
        }
    default:
        break
    }
}

/// `schema`, or the schema its `$ref` names.
func resolveRef(_ schema: JSONValue, _ schemas: JSONValue) -> JSONValue {
    let prefix = "#/components/schemas/"
    guard let ref = schema["$ref"]?.stringValue else { return schema }
    guard ref.hasPrefix(prefix), let target = schemas[String(ref.dropFirst(prefix.count))] else {
        XCTFail("unknown $ref \(ref)")
        return .object([:])
    }
    return resolveRef(target, schemas)
}

/// What an app reads on any LikeError beside its case and reason.
struct ErrorFields: Equatable, CustomStringConvertible {
    let code: String
    let isTransient: Bool
    let status: Int32?
    let retryAfterMs: Int64?

    init(_ code: String, _ isTransient: Bool, _ status: Int32?, _ retryAfterMs: Int64?) {
        self.code = code
        self.isTransient = isTransient
        self.status = status
        self.retryAfterMs = retryAfterMs
    }

    init(of error: LikeError) {
        self.init(error.code, error.isTransient, error.status, error.retryAfterMs)
    }

    var description: String {
        "(\(code), \(isTransient), \(status.map { String($0) } ?? "nil"), \(retryAfterMs.map { String($0) } ?? "nil"))"
    }
}

/// The case, by an exhaustive switch, as an app matches on it.
func caseName(_ error: LikeError) -> String {
    switch error {
    case .Network: return "Network"
    case .Timeout: return "Timeout"
    case .Server: return "Server"
    case .RateLimited: return "RateLimited"
    case .InvalidResponse: return "InvalidResponse"
    case .Unauthorized: return "Unauthorized"
    case .Forbidden: return "Forbidden"
    case .NotFound: return "NotFound"
    case .Rejected: return "Rejected"
    case .InvalidId: return "InvalidId"
    case .Config: return "Config"
    case .Shutdown: return "Shutdown"
    case .Journal: return "Journal"
    case .Expired: return "Expired"
    }
}
