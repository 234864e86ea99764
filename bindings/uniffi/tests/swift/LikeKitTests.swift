// The generated Swift bindings against the real reference server.
//
// `cargo xtask test --only swift` generates the package, copies this file
// into its Tests/LikeKitTests, starts `likekit-server` and runs `swift test`
// with LIKEKIT_URL and LIKEKIT_ADMIN_KEY set (only where a Swift toolchain
// is installed).
import Foundation
import XCTest

@testable import LikeKit

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The reference server's admin API (X-Admin-Key).
final class Admin: @unchecked Sendable {
    let url: String
    private let key: String
    private var lastId: Int64 = 1000
    private let lock = NSLock()

    static let shared: Admin = {
        let env = ProcessInfo.processInfo.environment
        guard let url = env["LIKEKIT_URL"], let key = env["LIKEKIT_ADMIN_KEY"] else {
            fatalError("LIKEKIT_URL and LIKEKIT_ADMIN_KEY are not set (run `cargo xtask test --only swift`)")
        }
        return Admin(url: url, key: key)
    }()

    init(url: String, key: String) {
        self.url = url
        self.key = key
    }

    func nextId() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        lastId += 1
        return lastId
    }

    @discardableResult
    func call(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> [String: Any] {
        var request = URLRequest(url: URL(string: url + path)!)
        request.httpMethod = method
        request.setValue(key, forHTTPHeaderField: "X-Admin-Key")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let body { request.httpBody = try JSONSerialization.data(withJSONObject: body) }
        let done = DispatchSemaphore(value: 0)
        var result: (Data?, URLResponse?, Error?) = (nil, nil, nil)
        URLSession.shared.dataTask(with: request) { data, response, error in
            result = (data, response, error)
            done.signal()
        }.resume()
        done.wait()
        if let error = result.2 { throw error }
        let status = (result.1 as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw NSError(domain: "admin", code: status, userInfo: [NSLocalizedDescriptionKey: "\(method) \(path) answered \(status)"])
        }
        guard let data = result.0, !data.isEmpty else { return [:] }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    func user(_ name: String, friends: [Int64] = []) throws -> Int64 {
        let id = nextId()
        try call("POST", "/admin/users", ["id": id, "name": name])
        if !friends.isEmpty { try call("PUT", "/admin/users/\(id)/friends", ["friends": friends]) }
        return id
    }

    func post() throws -> Int64 {
        let id = nextId()
        try call("POST", "/admin/posts", ["id": id])
        return id
    }

    func token(_ user: Int64) throws -> String {
        try call("POST", "/admin/tokens", ["user_id": user, "ttl_secs": 3600])["token"] as! String
    }

    func faults(_ rules: [[String: Any]]) throws { try call("PUT", "/admin/faults", ["rules": rules]) }
    func clearFaults() throws { try call("DELETE", "/admin/faults") }
}

final class FixedToken: TokenProvider, @unchecked Sendable {
    let value: String
    init(_ value: String) { self.value = value }
    func token(refresh: Bool) -> String? { refresh ? nil : value }
}

/// Records every event with the thread it arrived on.
final class Recorder: LikeObserver, @unchecked Sendable {
    private let lock = NSCondition()
    private(set) var changes: [(view: PostView, onMain: Bool)] = []
    private(set) var failures: [(postId: Int64, wanted: Bool, error: LikeError)] = []

    func onChange(view: PostView) {
        lock.lock()
        changes.append((view, Thread.isMainThread))
        lock.broadcast()
        lock.unlock()
    }

    func onFailure(postId: Int64, wanted: Bool, error: LikeError) {
        lock.lock()
        failures.append((postId, wanted, error))
        lock.broadcast()
        lock.unlock()
    }

    func snapshot() -> [(view: PostView, onMain: Bool)] {
        lock.lock()
        defer { lock.unlock() }
        return changes
    }

    func awaitChange(timeout: TimeInterval = 5, _ matches: (PostView) -> Bool) -> (view: PostView, onMain: Bool)? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let found = changes.first(where: { matches($0.view) }) { return found }
            if !lock.wait(until: deadline) { return nil }
        }
    }

    func awaitFailure(timeout: TimeInterval = 5) -> (postId: Int64, wanted: Bool, error: LikeError)? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let found = failures.first { return found }
            if !lock.wait(until: deadline) { return nil }
        }
    }
}

let fastRetry = LikeClientOptions(retryMinDelayMs: 10, retryMaxDelayMs: 20, maxRetries: 2, retryJitter: false)

final class LikeKitTests: XCTestCase {
    let admin = Admin.shared

    func client(_ options: LikeClientOptions = LikeClientOptions(), user: Int64? = nil) throws -> LikeClient {
        let viewer = try user ?? admin.user("Ana")
        return try LikeClient(baseUrl: admin.url, tokenProvider: FixedToken(try admin.token(viewer)), options: options)
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
        _ = try LikeClient(baseUrl: admin.url, tokenProvider: nil, options: defaults)
    }

    func testZeroAndNegativeIdsAreInvalidIdBadPostId() async throws {
        let client = try self.client()
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
                    guard case LikeError.InvalidId(let message) = error else { return XCTFail("\(name)(\(bad)): got \(error)") }
                    XCTAssertEqual(message, expected)
                }
            }
            do {
                _ = try await client.refresh(postId: bad)
                XCTFail("refresh(\(bad)): no error")
            } catch LikeError.InvalidId(let message) {
                XCTAssertEqual(message, expected)
            }
            let existing = try admin.post()
            do {
                _ = try await client.refreshMany(postIds: [existing, bad])
                XCTFail("refreshMany(\(bad)): no error")
            } catch LikeError.InvalidId(let message) {
                XCTAssertEqual(message, expected)
            }
        }
        XCTAssertEqual(client.stats().taps, 0)
        XCTAssertEqual(client.stats().callsSent, 0)
    }

    func testBadBaseUrlIsATypedConfigError() {
        XCTAssertThrowsError(try LikeClient(baseUrl: "not a url")) { error in
            guard case LikeError.Config(_) = error else { return XCTFail("got \(error)") }
        }
    }

    func testOptimisticTapShowsBeforeTheServerAnswers() async throws {
        let post = try admin.post()
        try admin.faults([["route": "like", "latency_ms": 1500]])
        defer { try? admin.clearFaults() }
        let client = try self.client()
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

    func testRollbackCallsOnFailureAndRestoresTheCount() async throws {
        let post = try admin.post()
        try admin.faults([["route": "like", "error_rate": 1.0, "status": 503]])
        defer { try? admin.clearFaults() }
        let client = try self.client(fastRetry)
        let rec = Recorder()
        let sub = try client.subscribe(postId: post, observer: rec)
        XCTAssertTrue(try client.setLiked(postId: post, liked: true).liked)
        let failure = try XCTUnwrap(rec.awaitFailure())
        XCTAssertEqual(failure.postId, post)
        XCTAssertTrue(failure.wanted)
        guard case .Server(_) = failure.error else { return XCTFail("got \(failure.error)") }
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        let view = try XCTUnwrap(try client.view(postId: post))
        XCTAssertFalse(view.liked)
        XCTAssertEqual(view.count, 0)
        XCTAssertEqual(client.stats().retries, 2)
        XCTAssertEqual(client.stats().rollbacks, 1)
        sub.cancel()
    }

    func testRapidTapsCoalesce() async throws {
        let post = try admin.post()
        try admin.faults([["route": "like", "latency_ms": 300], ["route": "unlike", "latency_ms": 300]])
        defer { try? admin.clearFaults() }
        let client = try self.client()
        _ = try client.toggle(postId: post)
        _ = try client.toggle(postId: post)
        let last = try client.toggle(postId: post)
        XCTAssertTrue(last.liked)
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        let stats = client.stats()
        XCTAssertEqual([stats.taps, stats.callsSent, stats.coalesced], [3, 1, 2])
    }

    func testRefreshReadsTheFriendsLineAndUnknownPostsThrow() async throws {
        let ben = try admin.user("Ben")
        let cleo = try admin.user("Cleo", friends: [ben])
        let post = try admin.post()
        let benClient = try self.client(user: ben)
        _ = try benClient.setLiked(postId: post, liked: true)
        _ = await benClient.waitIdle(timeoutMs: 10_000)

        let client = try self.client(user: cleo)
        let view = try await client.refresh(postId: post)
        XCTAssertEqual(view.count, 1)
        XCTAssertEqual(view.friends, ["Ben"])
        XCTAssertEqual(view.line.text, "Liked by Ben")
        do {
            _ = try await client.refresh(postId: admin.nextId())
            XCTFail("no error")
        } catch LikeError.NotFound(let message) {
            XCTAssertTrue(message.contains("not found"))
        }
    }

    func testCallbacksArriveOffTheMainThreadAndCancelStopsThem() async throws {
        let post = try admin.post()
        let client = try self.client()
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
        let post = try admin.post()
        let tokens = FixedToken(try admin.token(try admin.user("Dev")))
        let baseline = liveObjects()
        for _ in 0..<10_000 {
            let client = try LikeClient(baseUrl: admin.url, tokenProvider: tokens)
            let sub = try client.subscribe(postId: post, observer: Recorder())
            sub.cancel()
        }
        let client = try LikeClient(baseUrl: admin.url, tokenProvider: tokens)
        for _ in 0..<10_000 {
            _ = client.subscribeAll(observer: Recorder())
        }
        let deadline = Date().addingTimeInterval(10)
        while liveObjects() != baseline + 1 && Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertEqual(liveObjects(), baseline + 1)  // the client above
    }
}
