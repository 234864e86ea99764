// A SwiftUI like button on LikeKit: the heart, the count, the "Liked by …"
// line and a "didn't save" message. Uses the Swift package that
// `cargo xtask bindings` generates (module `LikeKit`); see the README's iOS
// section for building the library and adding the package.
//
//     let client = try LikeClient(baseUrl: "https://likes.example.com",
//                                 tokenProvider: SessionToken(session))
//     LikeButton(client: client, postId: 42)
//
// One client per signed-in viewer, shared by every button.
import LikeKit
import SwiftUI

/// Hands LikeKit the viewer's sign-in token. LikeKit asks on its own
/// threads, so return a cached token at once; renew it elsewhere.
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

/// One post's like state for SwiftUI. Read and changed on the main thread
/// only: LikeKit's events are forwarded there.
final class LikeButtonModel: ObservableObject {
    @Published private(set) var view: PostView?
    @Published private(set) var failure: String?

    private let client: LikeClient
    private let postId: Int64
    private var subscription: LikeSubscription?

    init(client: LikeClient, postId: Int64) {
        self.client = client
        self.postId = postId
        // Only an id outside 1...Int64.max throws (LikeError.InvalidId); the
        // button then stays empty.
        view = try? client.view(postId: postId)
        subscription = try? client.subscribe(postId: postId, observer: MainThreadForwarder(self))
    }

    deinit { subscription?.cancel() }

    /// The heart was tapped: the new view comes back at once, before any I/O.
    func tap() {
        failure = nil
        do {
            view = try client.toggle(postId: postId)
        } catch let error as LikeError {
            failure = "Couldn't like this post: \(error.message)"
        } catch {}
    }

    /// Reads the post (others' likes, the friends line) when the row appears.
    func load() async {
        do {
            let fresh = try await client.refresh(postId: postId)
            await MainActor.run { self.view = fresh }
        } catch let error as LikeError {
            await MainActor.run { self.failure = "Couldn't load likes: \(error.message)" }
        } catch {}
    }

    fileprivate func changed(_ view: PostView) { self.view = view }

    fileprivate func failed(wanted: Bool, error: LikeError) {
        failure = wanted ? "Your like didn't save." : "Your unlike didn't save."
    }
}

/// LikeKit calls observers on whichever thread fed it (often one of its own):
/// hop to the main queue, in order. Holds the model weakly so that the
/// subscription does not keep it alive.
private final class MainThreadForwarder: LikeObserver, @unchecked Sendable {
    private weak var model: LikeButtonModel?

    init(_ model: LikeButtonModel) { self.model = model }

    func onChange(view: PostView) {
        DispatchQueue.main.async { [weak model] in model?.changed(view) }
    }

    func onFailure(postId: Int64, wanted: Bool, error: LikeError) {
        DispatchQueue.main.async { [weak model] in model?.failed(wanted: wanted, error: error) }
    }
}

extension LikeError {
    /// The English message every variant carries.
    var message: String {
        switch self {
        case .Network(let message), .Timeout(let message), .Server(let message),
            .RateLimited(let message), .InvalidResponse(let message), .Unauthorized(let message),
            .Forbidden(let message), .NotFound(let message), .Rejected(let message),
            .Config(let message), .Shutdown(let message):
            return message
        }
    }
}

/// The heart, the count, the line under the post and the "didn't save"
/// message.
struct LikeButton: View {
    @StateObject private var model: LikeButtonModel

    init(client: LikeClient, postId: Int64) {
        _model = StateObject(wrappedValue: LikeButtonModel(client: client, postId: postId))
    }

    var body: some View {
        let liked = model.view?.liked ?? false
        VStack(alignment: .leading, spacing: 4) {
            HStack(spacing: 6) {
                Button(action: model.tap) {
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
        .task { await model.load() }
    }
}
