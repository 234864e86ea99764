// The conformance suite (sdk-core/conformance/scenarios.json, whose path is
// in LIKEKIT_CONFORMANCE) replayed through the Swift bindings: each
// scenario on a client over a ScriptedServer, step by step, as
// `run_on_client` in sdk-core/tests/conformance.rs does it.
//
// `cargo xtask test --only swift` copies this file beside LikeKitTests.swift
// and sets LIKEKIT_CONFORMANCE (only where a Swift toolchain is installed).
// The file is read into LikeKitTesting's JSONValue, so that booleans and
// whole numbers stay apart and compare exactly.
import Foundation
import LikeKitTesting
import XCTest

import LikeKit

final class ConformanceTests: XCTestCase {
    /// Every scenario of the file holds on the client; each one that does
    /// not is reported with its step and what differed.
    func testEveryScenarioHoldsOnTheClient() async throws {
        let scenarios = try ConformanceSuite.scenarios()
        for scenario in scenarios {
            do {
                if let mismatch = try await ConformanceRunner.run(scenario) {
                    XCTFail(mismatch)
                }
            } catch {
                XCTFail("scenario \"\(scenario.name)\": \(error)")
            }
        }
    }

    /// The first scenario with its last expected count one higher must be
    /// reported as failing, naming the view: a runner that compares nothing
    /// cannot pass.
    func testTheRunnerFailsAScenarioWhoseExpectedCountWasChanged() async throws {
        let scenarios = try ConformanceSuite.scenarios()
        let first = try XCTUnwrap(scenarios.first, "no scenarios")
        let scenario = try first.withAWrongCount()
        let mismatch = try await ConformanceRunner.run(scenario)
        let error = try XCTUnwrap(mismatch, "the runner passed \"\(scenario.name)\" with a wrong count")
        XCTAssertTrue(error.contains("view: expected"), "the mismatch does not name the view: \(error)")
        XCTAssertTrue(error.contains(scenario.name), "the mismatch does not name the scenario: \(error)")
    }
}

/// A problem with the file or a step that cannot be carried out.
private struct ConformanceProblem: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One scenario of the file; its steps as written.
private struct ConformanceScenario {
    let name: String
    let maxRetries: Int64
    var steps: [JSONValue]

    /// This scenario with its last expected view's count one higher.
    func withAWrongCount() throws -> ConformanceScenario {
        var changed = self
        guard
            let index = steps.lastIndex(where: { $0["view"]?["count"] != nil }),
            case var .object(step) = steps[index],
            case var .object(view)? = step["view"],
            case let .integer(count)? = view["count"]
        else {
            throw ConformanceProblem("\"\(name)\" has no step with a view's count")
        }
        view["count"] = .integer(count + 1)
        step["view"] = .object(view)
        changed.steps[index] = .object(step)
        return changed
    }
}

private enum ConformanceSuite {
    /// The scenarios of the file at LIKEKIT_CONFORMANCE.
    static func scenarios() throws -> [ConformanceScenario] {
        guard let path = ProcessInfo.processInfo.environment["LIKEKIT_CONFORMANCE"] else {
            throw ConformanceProblem("LIKEKIT_CONFORMANCE is not set (run `cargo xtask test --only swift`)")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let suite = try JSONDecoder().decode(JSONValue.self, from: data)
        guard suite["format"] == JSONValue.integer(1) else {
            throw ConformanceProblem("\(path): format \(conformanceText(suite["format"] ?? .null)), expected 1")
        }
        guard let list = suite["scenarios"]?.arrayValue, !list.isEmpty else {
            throw ConformanceProblem("\(path) has no scenarios")
        }
        return try list.map { (scenario: JSONValue) throws -> ConformanceScenario in
            guard let name = scenario["name"]?.stringValue, let steps = scenario["steps"]?.arrayValue else {
                throw ConformanceProblem("a scenario without a name or steps: \(conformanceText(scenario))")
            }
            var maxRetries: Int64 = 0
            if let given = scenario["max_retries"] {
                maxRetries = try wholeNumber(given, "max_retries of \"\(name)\"")
            }
            return ConformanceScenario(name: name, maxRetries: maxRetries, steps: steps)
        }
    }
}

private enum ConformanceRunner {
    /// How long the runner waits for an expected view, event or call.
    static let settle: TimeInterval = 2

    /// Runs `scenario` on a client over a ScriptedServer: nil when every
    /// step gave the view, events and calls it expects, else what differed
    /// first.
    static func run(_ scenario: ConformanceScenario) async throws -> String? {
        let server = ScriptedServer()
        let options = LikeClientOptions(
            retryMinDelayMs: 1, retryMaxDelayMs: 1, maxRetries: scenario.maxRetries, retryJitter: false)
        let client = try LikeClient.scripted(server: server, options: options)
        let log = ConformanceEventLog()
        let subscription = client.subscribeAll(observer: log)
        defer { subscription.cancel() }
        // Scenario call number -> its post.
        var posts: [Int64: Int64] = [:]
        var taken = 0
        for (index, step) in scenario.steps.enumerated() {
            func broken(_ what: String) -> ConformanceProblem {
                ConformanceProblem("scenario \"\(scenario.name)\", step \(index): \(what)")
            }
            let expectedView = step["view"] ?? .null
            guard let expectedEvents = step["events"]?.arrayValue, let written = step["calls"]?.arrayValue else {
                throw broken("no events or calls")
            }
            let expectedCalls = try written.map { (call: JSONValue) throws -> String in
                guard let text = call.stringValue else { throw broken("a call that is not a string") }
                return text
            }
            var view: JSONValue
            // The post of an answered or failed call, whose view is looked at
            // again once everything settled.
            var answeredPost: Int64?
            let act = step["do"]?.stringValue ?? ""
            switch act {
            case "read":
                let post = try wholeNumber(step["post"], "post")
                let likes = step["likes"] ?? .null
                let friends = try (likes["friends"]?.arrayValue ?? []).map { (friend: JSONValue) throws -> String in
                    guard let name = friend.stringValue else { throw broken("a friend that is not a string") }
                    return name
                }
                let count = try wholeNumber(likes["count"], "likes.count")
                let likedByMe = try truth(likes["liked_by_me"], "likes.liked_by_me")
                let version = try wholeNumber(likes["version"], "likes.version")
                try server.setPost(postId: post, count: count, likedByMe: likedByMe, friends: friends, version: version)
                let read = try await client.refresh(postId: post)
                view = conformanceView(read)
            case "tap":
                let post = try wholeNumber(step["post"], "post")
                let liked = try truth(step["liked"], "liked")
                let tapped = try client.setLiked(postId: post, liked: liked)
                view = conformanceView(tapped)
            case "answer":
                let call = try wholeNumber(step["call"], "call")
                guard let post = posts[call] else { throw broken("call #\(call) was never sent") }
                let state = step["state"] ?? .null
                let count = try wholeNumber(state["count"], "state.count")
                let likedByMe = try truth(state["liked_by_me"], "state.liked_by_me")
                let version = try wholeNumber(state["version"], "state.version")
                let answered = try server.answer(id: call, count: count, likedByMe: likedByMe, version: version)
                guard answered else { throw broken("call #\(call) is not waiting") }
                view = try await settleView(client, post, expectedView)
                answeredPost = post
            case "fail":
                let call = try wholeNumber(step["call"], "call")
                guard let post = posts[call] else { throw broken("call #\(call) was never sent") }
                let failure = try scriptedFailure(step["failure"])
                guard server.fail(id: call, failure: failure) else { throw broken("call #\(call) is not waiting") }
                view = try await settleView(client, post, expectedView)
                answeredPost = post
            default:
                throw broken("unknown step \(conformanceText(step["do"] ?? .null))")
            }
            // The expected events, or as many as come within `settle`; then
            // the expected calls, or what is out after `settle`.
            let deadline = Date().addingTimeInterval(settle)
            while log.count < taken + expectedEvents.count && Date() < deadline {
                try await Task.sleep(nanoseconds: 1_000_000)
            }
            var calls = server.calls().map(\.text)
            while calls != expectedCalls && Date() < deadline {
                try await Task.sleep(nanoseconds: 1_000_000)
                calls = server.calls().map(\.text)
            }
            for call in server.calls() {
                posts[call.id] = call.postId
            }
            if calls.isEmpty {
                // Nothing is out: once idle, every event has been heard.
                _ = await client.waitIdle(timeoutMs: Int64(settle * 1000))
            }
            let events = log.events(from: taken)
            taken += events.count
            if let post = answeredPost {
                // The first look may have been the view from before the answer.
                view = conformanceView(try client.view(postId: post))
            }

            var wrong: [String] = []
            if view != expectedView {
                wrong.append("view: expected \(conformanceText(expectedView)) got \(conformanceText(view))")
            }
            if events != expectedEvents {
                wrong.append(
                    "events: expected \(conformanceText(.array(expectedEvents))) got \(conformanceText(.array(events)))")
            }
            if calls != expectedCalls {
                wrong.append("calls: expected \(expectedCalls) got \(calls)")
            }
            if !wrong.isEmpty {
                return "scenario \"\(scenario.name)\", step \(index): " + wrong.joined(separator: "; ")
            }
        }
        return nil
    }

    /// The post's view, as the scenarios write it, once it is `expected`,
    /// or as it is after `settle`.
    static func settleView(_ client: LikeClient, _ post: Int64, _ expected: JSONValue) async throws -> JSONValue {
        let deadline = Date().addingTimeInterval(settle)
        while true {
            let current = try client.view(postId: post)
            let view = conformanceView(current)
            if view == expected || Date() >= deadline { return view }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}

/// Records every event any post's observers hear, as the scenarios write
/// it. Called on the library's threads; read by the runner.
///
/// `@unchecked Sendable`: every access to `heard` holds `lock`.
private final class ConformanceEventLog: LikeObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var heard: [JSONValue] = []

    func onChange(view: PostView) {
        record(["changed": conformanceView(view)])
    }

    func onFailure(postId: Int64, wanted: Bool, error: LikeError) {
        record(["failed": ["post": .integer(postId), "wanted": .bool(wanted), "error": .string(error.code)]])
    }

    /// How many events were heard so far.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return heard.count
    }

    /// The events heard from the `start`th on.
    func events(from start: Int) -> [JSONValue] {
        lock.lock()
        defer { lock.unlock() }
        return Array(heard[min(start, heard.count)...])
    }

    private func record(_ event: JSONValue) {
        lock.lock()
        heard.append(event)
        lock.unlock()
    }
}

/// A view as the scenarios write it (`null` for none).
private func conformanceView(_ view: PostView?) -> JSONValue {
    guard let view else { return .null }
    return [
        "post": .integer(view.postId),
        "liked": .bool(view.liked),
        "count": .integer(view.count),
        "pending": .bool(view.pending),
        "line": .string(view.line.text),
        "error": view.error.map { JSONValue.string($0.code) } ?? .null,
    ]
}

/// A step's failure: "network", "timeout", "unreadable", or
/// `{status, retry_after_ms?, code?}`.
private func scriptedFailure(_ failure: JSONValue?) throws -> ScriptedFailure {
    switch failure {
    case .string("network")?:
        return .network
    case .string("timeout")?:
        return .timeout
    case .string("unreadable")?:
        return .unreadable
    case let .object(fields)?:
        let number = try wholeNumber(fields["status"], "failure.status")
        guard let status = UInt16(exactly: number) else {
            throw ConformanceProblem("failure.status out of range: \(conformanceText(failure ?? .null))")
        }
        var retryAfterMs: Int64?
        if let given = fields["retry_after_ms"], given != .null {
            retryAfterMs = try wholeNumber(given, "failure.retry_after_ms")
        }
        return .status(status: status, retryAfterMs: retryAfterMs, code: fields["code"]?.stringValue)
    default:
        throw ConformanceProblem("unknown failure \(conformanceText(failure ?? .null))")
    }
}

private func wholeNumber(_ value: JSONValue?, _ what: String) throws -> Int64 {
    guard case let .integer(number)? = value else {
        throw ConformanceProblem("\(what) is not a whole number: \(conformanceText(value ?? .null))")
    }
    return number
}

private func truth(_ value: JSONValue?, _ what: String) throws -> Bool {
    guard case let .bool(flag)? = value else {
        throw ConformanceProblem("\(what) is not true or false: \(conformanceText(value ?? .null))")
    }
    return flag
}

/// `value` as JSON text, keys sorted, for messages.
private func conformanceText(_ value: JSONValue) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    guard let data = try? encoder.encode(value) else { return "\(value)" }
    return String(decoding: data, as: UTF8.self)
}
