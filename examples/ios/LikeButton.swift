// A SwiftUI like button on LikeKit: the heart, the count, the "Liked by …"
// line and a "didn't save" message, on the package's `views(postId:)`
// stream and an `@Observable` main-actor model (iOS 17, macOS 14). Uses the
// Swift package that `cargo xtask bindings --only uniffi` generates
// (module `LikeKit`); see the README's iOS section for building the library
// and adding the package.
//
//     let client = try LikeClient(baseUrl: "https://likes.example.com",
//                                 tokenProvider: SessionToken(token))
//     LikeButton(client: client, postId: 42)
//
// One client per signed-in viewer, shared by every button. To keep taps
// across app restarts give it the viewer's journal, in Application Support
// (Caches and tmp may be purged) excluded from backup (a restored device
// would otherwise send stale taps):
//
//     let journal = try IntentJournal.file(directory: likesDirectory.path, viewer: String(userId))
//     let client = try LikeClient(baseUrl: url, tokenProvider: SessionToken(token),
//                                 options: LikeClientOptions(journal: journal))
//     let report = client.restore()   // report.expired: taps too old to send
//
// To see what an observer or the token provider throws, give the client a
// CallbackErrorHandler. The client keeps it (and the provider) for as long
// as it lives, from its Rust side, where ARC does not look: a closure that
// captures the object owning the client keeps both alive for good (and the
// viewer's journal locked: the next sign-in gets journal_in_use). Capture
// the owner weakly:
//
//     options: LikeClientOptions(journal: journal,
//                                callbackErrorListener: CallbackErrorHandler { [weak self] callback, reason in
//                                    Task { @MainActor [weak self] in self?.report(callback, reason) }
//                                })
//
// On sign-out, in this order: stop using the client (leave the screens
// that show its buttons: their `.task`s are cancelled, which ends their
// streams), let calls still out finish, then let go of the client and the
// journal. A tap cut off at the deadline stays in the journal and is sent
// at the next sign-in; releasing the client without shutdown is shutdown
// with no wait: calls still out are abandoned, and stay in the journal. (Swift has no
// close(): a view that still holds the client keeps it alive; after
// shutdown its reads fail with `LikeError.Shutdown` and its taps change
// nothing.)
//
//     _ = await client.shutdown(deadlineMs: 2_000)
//     self.client = nil
//     self.journal = nil
//
// A feed page reads its posts in one request and its buttons do not read:
//
//     .task(id: page) { _ = try? await client.refreshMany(postIds: page) }
//     ForEach(page, id: \.self) { LikeButton(client: client, postId: $0, read: false) }
import LikeKit
import Observation
import SwiftUI

/// Hands LikeKit the viewer's sign-in token. LikeKit asks on its own
/// threads, so return a cached token at once; renew it elsewhere.
///
/// `@unchecked Sendable`: `current` is mutable, and every read and write of
/// it holds `lock`.
final class SessionToken: TokenProvider, @unchecked Sendable {
    private let lock = NSLock()
    private var current: String?

    init(_ token: String?) { current = token }

    func update(_ token: String?) {
        lock.lock()
        current = token
        lock.unlock()
    }

    func token(refresh: Bool) -> String? {
        lock.lock()
        defer { lock.unlock() }
        // On refresh (after a 401) hand back the newest token, or nil to give up.
        return current
    }
}

/// One post's like state for SwiftUI, on the main actor. The view comes
/// from the client's `views(postId:)` stream, iterated in a main-actor
/// task while the button is on screen (SwiftUI cancels `.task` when it
/// leaves, which ends the subscription). One model per post: a button
/// shown for another post gets a new one (see `LikeButton`).
@available(iOS 17, macOS 14, *)
@Observable
@MainActor
final class LikeButtonModel {
    /// Nil until the client knows the post (its first read): the button is
    /// then disabled and shows a placeholder.
    private(set) var view: PostView?
    private(set) var loadError: String?

    let client: LikeClient
    let postId: Int64

    init(client: LikeClient, postId: Int64) {
        self.client = client
        self.postId = postId
        // Only an id outside 1...Int64.max throws (LikeError.InvalidId); the
        // button then stays empty.
        view = try? client.view(postId: postId)
    }

    /// What to say under the heart, if anything. A load error only while
    /// there is no view. "Your like didn't save": the last tap did not save
    /// (after its retries); the view is back at the server's state and says
    /// why until the next tap. A pending view with an error is still being
    /// tried (`keepWhileOfflineMs`): it shows the tap, not the server's
    /// state.
    var message: String? {
        guard let view else { return loadError }
        guard view.error != nil else { return nil }
        if view.pending {
            return view.liked ? "Offline: your like will be sent." : "Offline: your unlike will be sent."
        }
        return view.liked ? "Your unlike didn't save." : "Your like didn't save."
    }

    /// The heart was tapped: the new view comes back at once, before any
    /// I/O. Drawn from here rather than waiting for the stream, which may
    /// bring it later (observers hear it from whichever thread is
    /// delivering). Not before the first read: the client would count the
    /// post as not liked.
    func tap() {
        guard view != nil else { return }
        view = (try? client.toggle(postId: postId)) ?? view
    }

    /// Follows the post's views while the button is shown; with `read`,
    /// reads the post (the count, others' likes, the friends line) too.
    func follow(read: Bool) async {
        // Subscribed first: the stream keeps the newest view, and the read's
        // own view arrives through it.
        guard let views = try? client.views(postId: postId) else { return }
        if read {
            // Its own task, not awaited here: the generated async calls do
            // not stop when their task is cancelled, so awaiting the read
            // would keep this loop and its subscription going after SwiftUI
            // cancels `.task`, until the read ends (up to its timeout).
            Task { await self.load() }
        }
        for await next in views {
            view = next
            loadError = nil
        }
    }

    /// Reads the post; says why in `loadError` if that fails.
    private func load() async {
        do {
            _ = try await client.refresh(postId: postId)
        } catch let error as LikeError {
            // `error.reason`, the core's English message: the error's
            // `localizedDescription` is its whole enum case, fields and all.
            loadError = "Couldn't load likes: \(error.reason)"
        } catch {}
    }
}

/// The heart, the count, the line under the post and the "didn't save"
/// message. `read`: whether the button reads the post when it appears; a
/// screen that reads its posts itself (a feed page with one
/// `refreshMany`) passes false.
@available(iOS 17, macOS 14, *)
@MainActor
struct LikeButton: View {
    let client: LikeClient
    let postId: Int64
    let read: Bool

    /// The model of the post shown, made by `.task(id:)` below.
    @State private var model: LikeButtonModel? = nil

    init(client: LikeClient, postId: Int64, read: Bool = true) {
        self.client = client
        self.postId = postId
        self.read = read
    }

    var body: some View {
        // Only the model of this very client and post: when they change,
        // the body runs before the new task has made the new model, and the
        // old post must not show (or take a tap) meanwhile.
        let shown = self.model.flatMap { $0.postId == postId && $0.client === client ? $0 : nil }
        let view = shown?.view
        let liked = view?.liked ?? false
        VStack(alignment: .leading, spacing: 4) {
            HStack(spacing: 6) {
                Button {
                    shown?.tap()
                } label: {
                    Image(systemName: liked ? "heart.fill" : "heart")
                        .foregroundStyle(liked ? Color.red : Color.primary)
                        .font(.title2)
                }
                .buttonStyle(.plain)
                .disabled(view == nil)  // no view yet: nothing to toggle
                .accessibilityLabel(liked ? "Unlike" : "Like")
                Text(view.map { $0.count.formatted() } ?? "…")
                    .monospacedDigit()
            }
            if let line = view?.line.text, !line.isEmpty {
                Text(line)  // "Liked by Ana and 1,203 others"
                    .font(.footnote)
                    .foregroundStyle(.secondary)
            }
            if let message = shown?.message {
                Text(message)
                    .font(.footnote)
                    .foregroundStyle(.red)
            }
        }
        // One model per client and post, made here rather than in `init`:
        // SwiftUI runs a view's `init` at every update of its parent and
        // keeps the first `State` value, so a model made there would be the
        // first post's for good when the same button (a detail pane, a
        // pager page) is given another post. `.task(id:)` cancels the old
        // post's task (ending its stream) and starts the new one whenever
        // the key changes, with no help from the call site, where
        // `.id(postId)` would otherwise have to be remembered.
        .task(id: LikeButtonKey(client: ObjectIdentifier(client), postId: postId)) { @MainActor in
            let next = LikeButtonModel(client: client, postId: postId)
            self.model = next
            await next.follow(read: read)
        }
    }
}

/// What a `LikeButton`'s task is keyed by: the client and the post.
private struct LikeButtonKey: Hashable {
    let client: ObjectIdentifier
    let postId: Int64
}
