// A SwiftUI like button on LikeKit: the heart, the count, the "Liked by …"
// line and a "didn't save" message, on the package's `views(postId:)`
// stream and an `@Observable` main-actor model (iOS 17, macOS 14). Uses the
// Swift package that `cargo xtask bindings` generates (module `LikeKit`);
// see the README's iOS section for building the library and adding the
// package.
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
//     let journal = try IntentJournal.file(directory: likesDirectory.path, viewer: userId)
//     let client = try LikeClient(baseUrl: url, tokenProvider: SessionToken(token),
//                                 options: LikeClientOptions(journal: journal))
//     let report = client.restore()   // report.expired: taps too old to send
//
// On sign-out let calls still out finish, then let go of the client and
// the journal (a tap cut off at the deadline stays in the journal and is
// sent at the next sign-in; releasing the client alone leaves calls
// running without a token, so they fail and roll back):
//
//     _ = await client.shutdown(deadlineMs: 2_000)
//     self.client = nil
//     self.journal = nil
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
/// leaves, which ends the subscription).
@available(iOS 17, macOS 14, *)
@Observable
@MainActor
final class LikeButtonModel {
    private(set) var view: PostView?
    private(set) var loadError: String?

    private let client: LikeClient
    private let postId: Int64

    init(client: LikeClient, postId: Int64) {
        self.client = client
        self.postId = postId
        // Only an id outside 1...Int64.max throws (LikeError.InvalidId); the
        // button then stays empty.
        view = try? client.view(postId: postId)
    }

    /// "Your like didn't save": the last tap did not save (after its
    /// retries); the view is back at the server's state and says why until
    /// the next tap. A pending view with an error is still being tried
    /// (`keepWhileOfflineMs`): it shows the tap, not the server's state.
    var failure: String? {
        guard let view, view.error != nil else { return loadError }
        if view.pending {
            return view.liked ? "Offline: your like will be sent." : "Offline: your unlike will be sent."
        }
        return view.liked ? "Your unlike didn't save." : "Your like didn't save."
    }

    /// The heart was tapped: the new view comes back at once, before any I/O.
    func tap() {
        view = (try? client.toggle(postId: postId)) ?? view
    }

    /// Follows the post's views while the button is shown, and reads the
    /// post (others' likes, the friends line) when it appears.
    func follow() async {
        // Subscribed first: the stream keeps the newest view while the read
        // is out, and the read's own view arrives through it.
        guard let views = try? client.views(postId: postId) else { return }
        do {
            _ = try await client.refresh(postId: postId)
        } catch let error as LikeError {
            loadError = "Couldn't load likes: \(error.reason)"
        } catch {}
        for await next in views {
            view = next
        }
    }
}

/// The heart, the count, the line under the post and the "didn't save"
/// message.
@available(iOS 17, macOS 14, *)
@MainActor
struct LikeButton: View {
    @State private var model: LikeButtonModel

    init(client: LikeClient, postId: Int64) {
        _model = State(initialValue: LikeButtonModel(client: client, postId: postId))
    }

    var body: some View {
        let liked = model.view?.liked ?? false
        VStack(alignment: .leading, spacing: 4) {
            HStack(spacing: 6) {
                Button {
                    model.tap()
                } label: {
                    Image(systemName: liked ? "heart.fill" : "heart")
                        .foregroundStyle(liked ? Color.red : Color.primary)
                        .font(.title2)
                }
                .buttonStyle(.plain)
                .accessibilityLabel(liked ? "Unlike" : "Like")
                Text((model.view?.count ?? 0).formatted())
                    .monospacedDigit()
            }
            if let line = model.view?.line.text, !line.isEmpty {
                Text(line)  // "Liked by Ana and 1,203 others"
                    .font(.footnote)
                    .foregroundStyle(.secondary)
            }
            if let failure = model.failure {
                Text(failure)
                    .font(.footnote)
                    .foregroundStyle(.red)
            }
        }
        .task { await model.follow() }
    }
}
