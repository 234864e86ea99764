// Swift concurrency faces of LikeClient: an AsyncStream of one post's views
// and one of every failure, each unsubscribing when its consumer stops, a
// callback dispatcher for the main queue, and a callback error listener
// from a closure. Shipped beside the generated
// bindings, in the LikeKit module.

import Dispatch
import Foundation

/// A like or unlike that did not save, after any retries: tell the viewer.
public struct LikeFailure: Sendable, Hashable {
    /// The post.
    public let postId: Int64
    /// True: the like did not save; false: the unlike did not.
    public let wanted: Bool
    /// Why.
    public let error: LikeError

    /// A failure of the viewer's like (`wanted` true) or unlike of
    /// `postId`: what `failures()` yields, made by hand for a preview or a
    /// test of the code that shows it.
    ///
    /// ```swift
    /// let failure = LikeFailure(postId: 42, wanted: true, error: .Timeout(
    ///     reason: "timed out", code: "timeout", isTransient: true, status: nil, retryAfterMs: nil))
    /// ```
    public init(postId: Int64, wanted: Bool, error: LikeError) {
        self.postId = postId
        self.wanted = wanted
        self.error = error
    }
}

extension LikeClient {
    /// One post's views: the view the client holds now (when it knows the
    /// post), then every change — a tap's optimistic view at once, the
    /// confirmed one when the server answers, a rollback, a read.
    ///
    /// Keeps only the newest view for a slow consumer. Cancelling the
    /// loop's task, or releasing the stream, ends the subscription (a
    /// `break` out of `for await … in try client.views(…)` releases it; a
    /// stream kept in a variable lives on until the variable goes). Views
    /// arrive on the consumer's executor: iterate in a `@MainActor` task to
    /// draw them.
    ///
    /// ```swift
    /// for await view in try client.views(postId: 42) { heart.render(view) }
    /// ```
    ///
    /// The stream never finishes by itself, not even after `shutdown` or
    /// once the client is released (it holds the client weakly): cancel
    /// the loop's task at sign-out.
    ///
    /// - Throws: `LikeError.InvalidId` for an id outside 1...Int64.max.
    public func views(postId: Int64) throws -> AsyncStream<PostView> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PostView.self, bufferingPolicy: .bufferingNewest(1))
        do {
            // The view held now comes first, in order with the changes (a
            // change still on its way as this subscribes comes before it,
            // never after): the newest always comes last.
            let subscription = try subscribeWithView(
                postId: postId, observer: ViewRelay(continuation))
            continuation.onTermination = { _ in subscription.cancel() }
        } catch {
            continuation.finish()
            throw error
        }
        return stream
    }

    /// Every failure of every post of this client, as they happen ("your
    /// like didn't save"): one subscription from this call until the loop
    /// ends. Keeps up to 64 for a slow consumer, dropping the oldest past
    /// that. It hears nothing from before the call: call it before
    /// `restore()` to hear that call's `Expired` failures (they are in
    /// `RestoreReport.expired` either way). Like `views(postId:)`, it never
    /// finishes by itself: cancel the loop's task at sign-out.
    public func failures() -> AsyncStream<LikeFailure> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: LikeFailure.self, bufferingPolicy: .bufferingNewest(64))
        let subscription = subscribeAll(observer: FailureRelay(continuation))
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }
}

/// Hands each change to a stream.
private final class ViewRelay: LikeObserver, Sendable {
    private let continuation: AsyncStream<PostView>.Continuation

    init(_ continuation: AsyncStream<PostView>.Continuation) {
        self.continuation = continuation
    }

    func onChange(view: PostView) {
        continuation.yield(view)
    }

    func onFailure(postId: Int64, wanted: Bool, error: LikeError) {}
}

/// Hands each failure to a stream.
private final class FailureRelay: LikeObserver, Sendable {
    private let continuation: AsyncStream<LikeFailure>.Continuation

    init(_ continuation: AsyncStream<LikeFailure>.Continuation) {
        self.continuation = continuation
    }

    func onChange(view: PostView) {}

    func onFailure(postId: Int64, wanted: Bool, error: LikeError) {
        continuation.yield(LikeFailure(postId: postId, wanted: wanted, error: error))
    }
}

/// A `CallbackDispatcher` for `LikeClientOptions(callbackDispatcher:)` that
/// runs every observer call of the client on the main queue, in order. The
/// tap's own change then arrives after the tap returns.
///
/// `LikeObserver`'s methods are not isolated to the main actor as far as
/// Swift 6 knows: inside them, reach main-actor state through
/// `MainActor.assumeIsolated { … }` (true under this dispatcher), or use
/// `views(postId:)` and `failures()` from a `@MainActor` task instead.
///
/// The main queue runs only in a process that drains it: every app does
/// (UIKit, AppKit, SwiftUI); a command-line program on Linux or macOS must
/// call `dispatchMain()` or run `RunLoop.main`, or the observers are never
/// called.
///
/// ```swift
/// let client = try LikeClient(baseUrl: url, tokenProvider: tokens,
///                             options: LikeClientOptions(callbackDispatcher: MainQueueDispatcher()))
/// ```
public final class MainQueueDispatcher: CallbackDispatcher {
    public init() {}

    public func dispatch(call: DispatchedCall) {
        DispatchQueue.main.async { call.run() }
    }
}

/// A `CallbackErrorListener` for `LikeClientOptions.callbackErrorListener`
/// from a closure: it hears what the client's observers and token providers
/// throw, which would otherwise go to the native standard error. `callback`
/// names what threw (`a TokenProvider`, `a LikeObserver in on_change`, …);
/// `reason` is the error's text. It is called on the thread where the
/// callback threw: return quickly.
///
/// ```swift
/// let logger = Logger(subsystem: "com.example.app", category: "LikeKit")
/// let options = LikeClientOptions(callbackErrorListener: CallbackErrorHandler { callback, reason in
///     logger.error("\(callback, privacy: .public) threw: \(reason, privacy: .public)")
/// })
/// ```
///
/// `os.Logger` shows an interpolated string as `<private>` on a device
/// unless it is marked `.public`. `callback` is one of LikeKit's fixed
/// names; `reason` is the error's own description, so mark it `.public`
/// only if your errors carry nothing private.
///
/// The client keeps the handler, as it keeps its token provider, for as
/// long as it lives, and holds it from its Rust side, where ARC does not
/// look: a closure that captures the object owning the client makes a
/// cycle that is never released. That object, the client and the
/// client's journal then stay for good, and the next sign-in of that
/// viewer gets `journal_in_use`. Capture the owner weakly (here a
/// `@MainActor` class; the handler is called on LikeKit's threads):
///
/// ```swift
/// client = try LikeClient(baseUrl: url, tokenProvider: tokens, options: LikeClientOptions(
///     callbackErrorListener: CallbackErrorHandler { [weak self] callback, reason in
///         Task { @MainActor [weak self] in self?.report(callback, reason) }
///     }))
/// ```
public final class CallbackErrorHandler: CallbackErrorListener {
    private let onError: @Sendable (_ callback: String, _ reason: String) -> Void

    public init(_ onError: @escaping @Sendable (_ callback: String, _ reason: String) -> Void) {
        self.onError = onError
    }

    public func onCallbackError(callback: String, reason: String) throws {
        onError(callback, reason)
    }
}
