// Taps that survive the app being killed: the intent journal
// (IntentJournal.file / IntentJournal.memory in LikeClientOptions.journal,
// maxIntentAgeMs, keepWhileOfflineMs, LikeClient.restore()) through the
// generated Swift bindings, against the real server: the Swift side of
// tests/kotlin/JournalTests.kt and tests/python/test_journal.py, whose
// killed apps are real processes ended with SIGKILL.
//
// A test bundle has no second app to kill, and a released client's call
// runs on (its journal locked) until it ends. So the killed app here is a
// client whose call is held on the server: the test takes its journal file
// while the call is out (a call goes out only once the journal holds its
// tap, so these are the bytes a kill leaves), cuts the call off with
// shutdown(deadlineMs: 0) (the connection closes, as in a kill), and starts
// the next client on a directory holding those bytes.
//
// `cargo xtask test --only swift` copies this file beside LikeKitTests.swift
// (whose TestServer, Ids, FixedToken, Recorder and caseName it uses) and
// runs it where a Swift toolchain is installed.
import Foundation
import LikeKitTesting
import XCTest

import LikeKit

/// Ana's journal key, and the name of her journal file (the key hex-encoded).
private let anaKey = "ana"
private let anaFile = "likekit-intents-616e61.json"

/// One intent in a journal file.
private struct Kept: Equatable {
    let post: Int64
    let liked: Bool
}

/// A post as a view shows it.
private struct Shown: Equatable {
    let post: Int64
    let liked: Bool
    let pending: Bool

    init(_ view: PostView) {
        self.init(post: view.postId, liked: view.liked, pending: view.pending)
    }

    init(post: Int64, liked: Bool, pending: Bool) {
        self.post = post
        self.liked = liked
        self.pending = pending
    }
}

/// A post as the server has it for one viewer.
private struct Heart: Equatable {
    let liked: Bool
    let count: Int64
}

/// A check that could not be made.
private struct Unexpected: Error, CustomStringConvertible {
    let description: String
}

private func nowMs() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

/// A new empty directory under the temporary one.
private func freshDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory
        .appendingPathComponent("likekit-journal-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

private func removeDirectory(_ dir: URL) {
    try? FileManager.default.removeItem(at: dir)
}

/// Ana's journal holding `intents`, as an earlier run writes it.
private func anaJournal(_ intents: [(post: Int64, liked: Bool, tappedAtMs: Int64)]) -> Data {
    let listed = intents.map { #"{"post":\#($0.post),"liked":\#($0.liked),"tapped_at_ms":\#($0.tappedAtMs)}"# }
    return Data(#"{"format":1,"viewer":"\#(anaKey)","intents":[\#(listed.joined(separator: ","))]}"#.utf8)
}

/// The intents of Ana's journal file in `dir`.
private func intents(in dir: URL) throws -> [Kept] {
    let journal = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: dir.appendingPathComponent(anaFile)))
    return try (journal["intents"]?.arrayValue ?? []).map { (intent: JSONValue) throws -> Kept in
        guard case let .integer(post)? = intent["post"], case let .bool(liked)? = intent["liked"] else {
            throw Unexpected(description: "not an intent: \(intent)")
        }
        return Kept(post: post, liked: liked)
    }
}

final class JournalTests: XCTestCase {
    var admin: LikeKitAdmin { TestServer.admin }

    /// A new user named `name` and a token provider signed in as them.
    private func signIn(_ name: String) async throws -> (id: Int64, tokens: FixedToken) {
        let id = try await admin.user(name)
        return (id, FixedToken(try await admin.mintToken(user: id)))
    }

    /// `post` as the server has it for the viewer of `tokens`.
    private func readBack(_ post: Int64, _ tokens: TokenProvider) async throws -> Heart {
        let view = try await LikeClient(baseUrl: TestServer.url, tokenProvider: tokens).refresh(postId: post)
        return Heart(liked: view.liked, count: view.count)
    }

    /// The request journal's entries that `filter` selects, failing when it
    /// let older entries go (a missing call would then prove nothing).
    private func sent(_ filter: RequestFilter) async throws -> [JournalEntry] {
        let journal = try await admin.requests(filter)
        XCTAssertEqual(journal.dropped, 0, "entries the request journal let go")
        return journal.entries
    }

    /// Waits up to `timeout` seconds for `check` to hold.
    private func waitFor(_ what: String, timeout: TimeInterval = 15, _ check: () async throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !(try await check()) {
            guard Date() < deadline else { throw Unexpected(description: "timed out waiting for \(what)") }
            try await Task.sleep(nanoseconds: 20_000_000)
        }
    }

    /// Runs `body` with `rules` in force, and clears them after, whatever happens.
    private func withRules<T>(_ rules: [FaultRule], _ body: () async throws -> T) async throws -> T {
        try await admin.setFaults(FaultRules(rules: rules))
        do {
            let result = try await body()
            try await admin.clearFaults()
            return result
        } catch {
            _ = try? await admin.clearFaults()
            throw error
        }
    }

    /// Ana's app tapping `taps` (true: like) on `post` while `route` is held
    /// 10 s about it, ended once its first call reached the server: the
    /// bytes its journal file held then, as a kill leaves them.
    private func tapAndKill(_ post: Int64, taps: [Bool], route: FaultRoute, tokens: TokenProvider) async throws -> Data {
        let dir = try freshDirectory()
        defer { removeDirectory(dir) }
        try await admin.clearRequests()
        return try await withRules([FaultRule(route: route, post: post, latencyMs: 10_000)]) {
            let journal = try IntentJournal.file(directory: dir.path, viewer: anaKey)
            let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens, options: LikeClientOptions(journal: journal))
            _ = try await client.refresh(postId: post)  // the heart as the server has it
            for liked in taps {
                _ = try client.setLiked(postId: post, liked: liked)
            }
            try await waitFor("the call to reach the server") {
                !(try await self.admin.requests(RequestFilter(route: route, post: post)).entries.isEmpty)
            }
            let onDisk = try Data(contentsOf: dir.appendingPathComponent(anaFile))
            // The kill: the held call is cut off.
            _ = await client.shutdown(deadlineMs: 0)
            return onDisk
        }
    }

    /// A new client for Ana on a new directory holding `journal`, listened
    /// to by `observer`, restored. The caller removes the directory.
    private func restarted(
        with journal: Data, tokens: TokenProvider, maxIntentAgeMs: Int64? = nil, observer: LikeObserver? = nil
    ) throws -> (client: LikeClient, report: RestoreReport, dir: URL, subscription: LikeSubscription?) {
        let dir = try freshDirectory()
        try journal.write(to: dir.appendingPathComponent(anaFile))
        let anas = try IntentJournal.file(directory: dir.path, viewer: anaKey)
        let options = LikeClientOptions(journal: anas, maxIntentAgeMs: maxIntentAgeMs)
        let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens, options: options)
        let subscription = observer.map { client.subscribeAll(observer: $0) }
        return (client, client.restore(), dir, subscription)
    }

    // MARK: A killed app's taps

    func testAKilledAppsLikeIsRestoredLikedAndPendingAtOnceAndReachesTheServerOnce() async throws {
        let (viewer, tokens) = try await signIn("Ana")
        let post = try await admin.post()
        let left = try await tapAndKill(post, taps: [true], route: .like, tokens: tokens)
        try await admin.clearRequests()
        let (client, report, dir, _) = try restarted(with: left, tokens: tokens)
        defer { removeDirectory(dir) }
        XCTAssertNil(report.problem)
        XCTAssertEqual(report.expired, [])
        XCTAssertEqual(report.restored.map { Shown($0) }, [Shown(post: post, liked: true, pending: true)], "pending at once")
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        let likes = try await sent(RequestFilter(route: .like, post: post))
        XCTAssertEqual(likes.count, 1, "one like after the restart")
        XCTAssertEqual(likes.first?.user, viewer)
        let heart = try await readBack(post, tokens)
        XCTAssertEqual(heart, Heart(liked: true, count: 1), "liked, counted once")
        XCTAssertEqual(try intents(in: dir), [], "intents kept once the like saved")
    }

    func testAKilledAppsUnlikeIsRestoredAndSaves() async throws {
        let (_, tokens) = try await signIn("Ana")
        let post = try await admin.post()
        let liker = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens)
        _ = try liker.setLiked(postId: post, liked: true)
        let liked = await liker.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(liked)
        let left = try await tapAndKill(post, taps: [false], route: .unlike, tokens: tokens)
        let (client, report, dir, _) = try restarted(with: left, tokens: tokens)
        defer { removeDirectory(dir) }
        XCTAssertEqual(report.restored.map { Shown($0) }, [Shown(post: post, liked: false, pending: true)])
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        let heart = try await readBack(post, tokens)
        XCTAssertEqual(heart, Heart(liked: false, count: 0))
    }

    func testLikeUnlikeLikeBeforeTheKillLeavesOneIntentAndAtMostOneCall() async throws {
        let (_, tokens) = try await signIn("Ana")
        let post = try await admin.post()
        let left = try await tapAndKill(post, taps: [true, false, true], route: .like, tokens: tokens)
        try await admin.clearRequests()
        let (client, report, dir, _) = try restarted(with: left, tokens: tokens)
        defer { removeDirectory(dir) }
        XCTAssertEqual(report.restored.map(\.liked), [true], "only the last intent")
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        let calls = try await sent(RequestFilter(post: post)).filter { $0.route == .like || $0.route == .unlike }
        XCTAssertLessThanOrEqual(calls.count, 1, "calls after the restart: \(calls.map(\.path))")
        let heart = try await readBack(post, tokens)
        XCTAssertEqual(heart, Heart(liked: true, count: 1))
    }

    func testAnotherViewerOnTheSameDirectoryRestoresAndSendsNothingOfAnas() async throws {
        let (_, anaTokens) = try await signIn("Ana")
        let post = try await admin.post()
        let left = try await tapAndKill(post, taps: [true], route: .like, tokens: anaTokens)
        try await admin.clearRequests()
        let dir = try freshDirectory()
        defer { removeDirectory(dir) }
        try left.write(to: dir.appendingPathComponent(anaFile))
        let (ben, benTokens) = try await signIn("Ben")
        let journal = try IntentJournal.file(directory: dir.path, viewer: "ben")
        let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: benTokens, options: LikeClientOptions(journal: journal))
        let report = client.restore()
        XCTAssertEqual(report, RestoreReport(restored: [], expired: [], problem: nil))
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        try await Task.sleep(nanoseconds: 200_000_000)
        let about = try await sent(RequestFilter(post: post))
        XCTAssertEqual(about.map(\.path), [], "nothing sent about Ana's post")
        XCTAssertEqual(client.stats().callsSent, 0)
        XCTAssertEqual(try Data(contentsOf: dir.appendingPathComponent(anaFile)), left, "Ana's journal untouched")
        let heart = try await readBack(post, benTokens)
        XCTAssertEqual(heart, Heart(liked: false, count: 0), "as Ben \(ben) reads it")
    }

    // MARK: Expired, damaged and shared journals

    func testAnIntentOlderThanADayFailsOnceWithExpiredAndSendsNothing() async throws {
        let (_, tokens) = try await signIn("Ana")
        let post = try await admin.post()
        let twoDaysAgo = nowMs() - 2 * 24 * 3_600_000
        try await admin.clearRequests()
        let rec = Recorder()
        let (client, report, dir, subscription) = try restarted(
            with: anaJournal([(post, true, twoDaysAgo)]), tokens: tokens, observer: rec)
        defer { removeDirectory(dir) }
        XCTAssertEqual(report.restored, [])
        XCTAssertNil(report.problem)
        XCTAssertEqual(report.expired.count, 1)
        let expired = try XCTUnwrap(report.expired.first)
        XCTAssertEqual(expired.postId, post)
        XCTAssertTrue(expired.wanted)
        XCTAssertEqual(caseName(expired.error), "Expired")
        XCTAssertEqual(expired.error.code, "expired")
        XCTAssertFalse(expired.error.isTransient)
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        XCTAssertEqual(rec.failures.map { "\($0.postId) \($0.wanted) \(caseName($0.error))" }, ["\(post) true Expired"])
        let about = try await sent(RequestFilter(post: post))
        XCTAssertEqual(about.map(\.path), [], "nothing sent")
        XCTAssertEqual(try intents(in: dir), [])
        subscription?.cancel()
    }

    func testMaxIntentAgeMsExpiresAnOlderIntentAndSendsAFreshOne() async throws {
        let (viewer, tokens) = try await signIn("Ana")
        let old = try await admin.post()
        let fresh = try await admin.post()
        let now = nowMs()
        try await admin.clearRequests()
        let rec = Recorder()
        let (client, report, dir, subscription) = try restarted(
            with: anaJournal([(old, true, now - 600_000), (fresh, true, now - 1_000)]),
            tokens: tokens, maxIntentAgeMs: 60_000, observer: rec)
        defer { removeDirectory(dir) }
        XCTAssertEqual(report.expired.map(\.postId), [old])
        XCTAssertEqual(report.restored.map { Shown($0) }, [Shown(post: fresh, liked: true, pending: true)])
        let idle = await client.waitIdle(timeoutMs: 10_000)
        XCTAssertTrue(idle)
        XCTAssertEqual(rec.failures.map { "\($0.postId) \(caseName($0.error))" }, ["\(old) Expired"])
        let aboutOld = try await sent(RequestFilter(post: old))
        XCTAssertEqual(aboutOld.map(\.path), [], "nothing sent about the old one")
        let likes = try await sent(RequestFilter(route: .like, post: fresh))
        XCTAssertEqual(likes.map(\.user), [viewer], "one like of the fresh one")
        subscription?.cancel()
    }

    func testADamagedJournalIsReportedOnceAsJournalAndReplaced() async throws {
        let (_, tokens) = try await signIn("Ana")
        let post = try await admin.post()
        let damaged: [(String, Data)] = [
            ("truncated", Data(#"{"format":1,"viewer":"ana","intents":[{"post":\#(post),"liked":tr"#.utf8)),
            ("not text", Data([0x00, 0xFF, 0xFE])),
            ("a newer format", Data(#"{"format":7}"#.utf8)),
            (
                "another viewer's",
                Data(#"{"format":1,"viewer":"ben","intents":[{"post":\#(post),"liked":true,"tapped_at_ms":\#(nowMs())}]}"#.utf8)
            ),
        ]
        try await admin.clearRequests()
        for (name, bytes) in damaged {
            let (client, report, dir, _) = try restarted(with: bytes, tokens: tokens)
            defer { removeDirectory(dir) }
            let problem = try XCTUnwrap(report.problem, "\(name): no problem reported")
            XCTAssertEqual(caseName(problem), "Journal", name)
            XCTAssertEqual(problem.code, "journal_damaged", name)
            XCTAssertFalse(problem.isTransient, name)
            XCTAssertEqual(report.restored, [], name)
            XCTAssertEqual(report.expired, [], name)
            XCTAssertNil(client.restore().problem, "\(name): reported once")
            let file = dir.appendingPathComponent(anaFile)
            try await waitFor("\(name): the journal to be replaced") { try Data(contentsOf: file) != bytes }
            let after = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: file))
            XCTAssertEqual(after, ["format": 1, "viewer": "ana", "intents": []], name)
            let idle = await client.waitIdle(timeoutMs: 10_000)
            XCTAssertTrue(idle, name)
            XCTAssertEqual([client.stats().taps, client.stats().callsSent], [0, 0], "\(name): the client starts empty")
            XCTAssertNil(try client.view(postId: post), name)
        }
        let about = try await sent(RequestFilter(post: post))
        XCTAssertEqual(about.map(\.path), [], "nothing sent")
    }

    func testASecondJournalForTheSameDirectoryAndViewerIsRefusedWhileTheFirstLives() async throws {
        let (_, tokens) = try await signIn("Ana")
        let dir = try freshDirectory()
        defer { removeDirectory(dir) }
        func assertRefused(_ what: String, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try IntentJournal.file(directory: dir.path, viewer: anaKey), what, file: file, line: line) { error in
                guard let error = error as? LikeError else { return XCTFail("\(what): got \(error)", file: file, line: line) }
                XCTAssertEqual(caseName(error), "Journal", what, file: file, line: line)
                XCTAssertTrue(error.reason.contains("in use"), "\(what): \(error.reason)", file: file, line: line)
                XCTAssertEqual(error.code, "journal_in_use", what, file: file, line: line)
            }
        }
        var first: IntentJournal? = try IntentJournal.file(directory: dir.path, viewer: anaKey)
        withExtendedLifetime(first) {
            assertRefused("beside a journal")
            XCTAssertNoThrow(try IntentJournal.file(directory: dir.path, viewer: "ben"), "another viewer's is its own")
        }
        // A client holding the journal keeps it locked after the journal itself is let go.
        var client: LikeClient? = try LikeClient(
            baseUrl: TestServer.url, tokenProvider: tokens, options: LikeClientOptions(journal: first))
        first = nil
        withExtendedLifetime(client) {
            assertRefused("beside a client")
        }
        client = nil
        XCTAssertNoThrow(try IntentJournal.file(directory: dir.path, viewer: anaKey), "free once the client is gone")
    }

    func testOneJournalServesOneLiveClientAtATimeAndIsFreeOnceItIsReleased() async throws {
        let (_, tokens) = try await signIn("Ana")
        let dir = try freshDirectory()
        defer { removeDirectory(dir) }
        func assertRefused(_ what: String, _ make: () throws -> LikeClient, file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertThrowsError(try make(), what, file: file, line: line) { error in
                guard let error = error as? LikeError else { return XCTFail("\(what): got \(error)", file: file, line: line) }
                XCTAssertEqual(caseName(error), "Journal", what, file: file, line: line)
                XCTAssertTrue(error.reason.contains("in use"), "\(what): \(error.reason)", file: file, line: line)
                XCTAssertEqual(error.code, "journal_in_use", what, file: file, line: line)
            }
        }
        let journal = try IntentJournal.file(directory: dir.path, viewer: anaKey)
        let options = LikeClientOptions(journal: journal)
        var first: LikeClient? = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens, options: options)
        withExtendedLifetime(first) {
            assertRefused("the same options") {
                try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens, options: options)
            }
            assertRefused("the same journal in other options") {
                try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens,
                               options: LikeClientOptions(maxRetries: 0, journal: journal))
            }
        }
        first = nil
        XCTAssertNil(first)
        // Released with nothing in flight: free for the next sign-in.
        let second = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens, options: options)
        XCTAssertNil(second.restore().problem)
        _ = await second.shutdown(deadlineMs: 1_000)

        let memory = IntentJournal.memory(viewer: anaKey)
        let scripted = try LikeClient.scripted(server: ScriptedServer(), options: LikeClientOptions(journal: memory))
        withExtendedLifetime(scripted) {
            assertRefused("a memory journal") {
                try LikeClient.scripted(server: ScriptedServer(), options: LikeClientOptions(journal: memory))
            }
        }
    }

    // MARK: Kept while offline (a memory journal)

    func testKeepWhileOfflineMsHoldsTheTapPendingThroughFailuresThenItSaves() async throws {
        let (_, tokens) = try await signIn("Ana")
        let post = try await admin.post()
        try await admin.clearRequests()
        try await withRules([FaultRule(route: .like, post: post, action: .status(status: 503))]) {
            let options = LikeClientOptions(
                retryMinDelayMs: 10, retryMaxDelayMs: 20, maxRetries: 1, retryJitter: false,
                journal: IntentJournal.memory(viewer: anaKey), keepWhileOfflineMs: 100)
            let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens, options: options)
            XCTAssertEqual(client.restore(), RestoreReport(restored: [], expired: [], problem: nil), "a new memory journal")
            let rec = Recorder()
            let sub = try client.subscribe(postId: post, observer: rec)
            _ = try client.setLiked(postId: post, liked: true)
            // Retries used up: still pending, the view saying why.
            let held = try XCTUnwrap(rec.awaitChange(timeout: 10) { $0.pending && $0.error != nil }).view
            XCTAssertEqual(held.error.map(caseName), "Server")
            let tries = try await admin.waitForRequests(RequestFilter(route: .like, post: post), count: 4, timeout: 15)
            XCTAssertEqual(tries.met, true, "a few offline tries, answered (\(tries.entries.count) seen)")
            let view = try XCTUnwrap(try client.view(postId: post))
            XCTAssertTrue(view.liked && view.pending, "\(view)")
            XCTAssertNil(rec.awaitFailure(timeout: 0), "nobody hears \"didn't save\"")
            try await admin.clearFaults()
            let confirmed = try XCTUnwrap(rec.awaitChange(timeout: 10) { !$0.pending }).view
            XCTAssertEqual(Heart(liked: confirmed.liked, count: confirmed.count), Heart(liked: true, count: 1))
            XCTAssertNil(confirmed.error)
            sub.cancel()
        }
    }

    func testATapKeptOfflinePastMaxIntentAgeMsFailsOnceWithExpired() async throws {
        let (_, tokens) = try await signIn("Ana")
        let post = try await admin.post()
        try await withRules([FaultRule(route: .like, post: post, action: .status(status: 503))]) {
            let options = LikeClientOptions(
                retryMinDelayMs: 10, retryMaxDelayMs: 20, maxRetries: 1, retryJitter: false,
                journal: IntentJournal.memory(viewer: anaKey), maxIntentAgeMs: 500, keepWhileOfflineMs: 50)
            let client = try LikeClient(baseUrl: TestServer.url, tokenProvider: tokens, options: options)
            let rec = Recorder()
            let sub = try client.subscribe(postId: post, observer: rec)
            _ = try client.setLiked(postId: post, liked: true)
            let failure = try XCTUnwrap(rec.awaitFailure(timeout: 10))
            XCTAssertEqual(failure.postId, post)
            XCTAssertTrue(failure.wanted)
            XCTAssertEqual(caseName(failure.error), "Expired")
            let rolledBack = try XCTUnwrap(rec.awaitChange { !$0.pending }).view
            XCTAssertEqual(Heart(liked: rolledBack.liked, count: rolledBack.count), Heart(liked: false, count: 0))
            let idle = await client.waitIdle(timeoutMs: 10_000)
            XCTAssertTrue(idle)
            let before = try await sent(RequestFilter(route: .like, post: post)).count
            try await Task.sleep(nanoseconds: 300_000_000)
            let after = try await sent(RequestFilter(route: .like, post: post)).count
            XCTAssertEqual(after, before, "likes sent after it expired")
            XCTAssertEqual(rec.failures.count, 1, "failures heard")
            sub.cancel()
        }
    }
}
