// A Jetpack Compose like button on LikeKit: the heart, the count, the
// "Liked by …" line and a "didn't save" message, on the package's Flow
// faces (`views`, in LikeKitFlows.kt beside the generated Kotlin). Uses the
// Kotlin that `cargo xtask bindings --only uniffi` generates (package
// com.likekit, with kotlinx-coroutines) and the library built per ABI with
// cargo-ndk; see the README's Android section.
//
//     val client = LikeClient("https://likes.example.com", SessionToken(token))
//     LikeButton(client, postId = 42L)        // one post: the button reads it
//     LikeFeed(client, postIds = page)         // a feed page: one read for the page
//
// One client per signed-in viewer, shared by every button. To keep taps
// across app restarts give it the viewer's journal, in noBackupFilesDir
// (Auto Backup copies filesDir and would restore stale taps elsewhere):
//
//     val journal = IntentJournal.file(context.noBackupFilesDir.path, viewer = userId)
//     val client = LikeClient(url, SessionToken(token), LikeClientOptions(journal = journal))
//     val report = client.restore()   // report.expired: taps too old to send
//
// To see what an observer or the token provider throws (Android discards
// the native standard error), give it a listener. The client holds the
// listener and the provider outside the garbage collector's sight until
// close(): a lambda that captures their owner (a ViewModel's `this`, an
// Activity) keeps the owner and the client alive until then, so close the
// client when its owner goes (onCleared), as below.
//
//     LikeClientOptions(journal = journal, callbackErrorListener = CallbackErrorListener { callback, reason ->
//         Log.e("LikeKit", "$callback threw: $reason")
//     })
//
// On sign-out, in this order:
//
// 1. Stop using the client: leave the screens that show its buttons and let
//    that composition end, cancel the coroutines collecting its flows, close
//    its subscriptions. After close() every call on the client throws
//    IllegalStateException ("LikeClient object has already been destroyed"),
//    not a LikeException, so a button still composed (during an exit
//    transition, say) would crash the app at its next call. Only the flow
//    helpers do not: views() and failures end at once, viewState() stays
//    null, and viewOrNull() returns null.
// 2. shutdown(ms): calls still out get up to ms to be saved; a tap cut off
//    at the deadline rolls back, and stays in the journal for the next
//    sign-in.
// 3. close() the client, then the journal. close() without shutdown (in
//    onCleared, which cannot suspend) is shutdown with no wait: calls still
//    out are abandoned with Shutdown, and their taps stay in the journal.
//
//     navigateToSignIn()              // 1: the buttons leave the composition
//     appScope.launch {
//         client.shutdown(2_000)      // 2
//         client.close()              // 3
//         journal.close()
//     }
package com.example.likes

import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Row
import androidx.compose.foundation.lazy.LazyColumn
import androidx.compose.foundation.lazy.items
import androidx.compose.material.icons.Icons
import androidx.compose.material.icons.filled.Favorite
import androidx.compose.material.icons.filled.FavoriteBorder
import androidx.compose.material3.Icon
import androidx.compose.material3.IconToggleButton
import androidx.compose.material3.LocalContentColor
import androidx.compose.material3.MaterialTheme
import androidx.compose.material3.Text
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.collectAsState
import androidx.compose.runtime.getValue
import androidx.compose.runtime.key
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.graphics.Color
import com.likekit.LikeClient
import com.likekit.LikeException
import com.likekit.TokenProvider
import com.likekit.reason
import com.likekit.viewOrNull
import com.likekit.views
import java.text.NumberFormat

/**
 * Hands LikeKit the viewer's sign-in token. LikeKit asks on its own
 * threads, so return a cached token at once; renew it elsewhere.
 */
class SessionToken(@Volatile var current: String?) : TokenProvider {
    // On refresh (after a 401) hand back the newest token, or null to give up.
    override fun token(refresh: Boolean): String? = current
}

/**
 * The heart, the count, the line under the post and the "didn't save"
 * message. [read]: whether the button reads the post when it appears; a
 * screen that reads its posts itself, such as [LikeFeed] with one
 * `refreshMany` for the page, passes false.
 */
@Composable
fun LikeButton(client: LikeClient, postId: Long, modifier: Modifier = Modifier, read: Boolean = true) {
    // Everything below is keyed by the client and the post: when either
    // changes in place (a pager, a detail pane showing another post), it
    // starts afresh. Without the key, collectAsState would keep showing the
    // old post's heart and count until the new post's flow emits (never,
    // for a post not read yet), and a tap meant to take back the old
    // post's like would like the new one.
    key(client, postId) {
        // The post's views: the one the client holds now (null before its
        // first read), then every change (a tap, the server's answer, a
        // rollback, a read), collected on the main thread; leaving the
        // screen unsubscribes. Both made once per client and post, not at
        // each recomposition. The first view is read with viewOrNull: a
        // button composed as the viewer signs out (an exit transition) may
        // meet a closed client, where view() throws IllegalStateException,
        // which nothing here would catch; viewOrNull gives null (a
        // placeholder) and views() then ends at once.
        val views = remember(client, postId) { client.views(postId) }
        val initial = remember(client, postId) { client.viewOrNull(postId) }
        val view by views.collectAsState(initial)
        var loadError by remember(client, postId) { mutableStateOf<String?>(null) }
        if (read) {
            // Read the post (the count, others' likes, the friends line).
            LaunchedEffect(client, postId) {
                loadError = try {
                    client.refresh(postId)
                    null
                } catch (e: LikeException) {
                    "Couldn't load likes: ${e.reason}"
                } catch (e: IllegalStateException) {
                    null // a closed client (the viewer signing out): the placeholder stays
                }
            }
        }

        // No view yet (the read is out, or failed): the client knows
        // nothing of the post, so the heart is disabled and the count a
        // placeholder. A tap now would act on nothing: toggle would count
        // the post as not liked, send a like, and show "1" for a post
        // others like 1,204 times.
        val shown = view
        val liked = shown?.liked == true
        Column(modifier) {
            Row(verticalAlignment = Alignment.CenterVertically) {
                IconToggleButton(
                    checked = liked,
                    // runCatching: a tap during the exit transition may meet a
                    // closed client, whose calls throw IllegalStateException.
                    onCheckedChange = { runCatching { client.toggle(postId) } },
                    enabled = shown != null,
                ) {
                    Icon(
                        imageVector = if (liked) Icons.Filled.Favorite else Icons.Filled.FavoriteBorder,
                        contentDescription = if (liked) "Unlike" else "Like",
                        tint = if (liked) Color.Red else LocalContentColor.current,
                    )
                }
                Text(if (shown == null) "…" else NumberFormat.getIntegerInstance().format(shown.count))
            }
            val line = shown?.line?.text.orEmpty() // "Liked by Ana and 1,203 others"
            if (line.isNotEmpty()) {
                Text(line, style = MaterialTheme.typography.bodySmall)
            }
            // A load error shows only while there is no view: once one
            // arrives (a later read, another screen's) it is over. The last
            // tap did not save (after its retries): the view is back at the
            // server's state and says why until the next tap. A pending view
            // with an error is still being tried (keepWhileOfflineMs): it
            // shows the tap, not the server's state. A screen-wide snackbar
            // can collect `client.failures` instead, whose `wanted` says
            // which tap it was.
            val message = when {
                shown == null -> loadError
                shown.error == null -> null
                shown.pending -> if (shown.liked) "Offline: your like will be sent." else "Offline: your unlike will be sent."
                else -> if (shown.liked) "Your unlike didn't save." else "Your like didn't save."
            }
            message?.let {
                Text(it, color = MaterialTheme.colorScheme.error, style = MaterialTheme.typography.bodySmall)
            }
        }
    }
}

/**
 * A feed page of like buttons, read with one `refreshMany` (one request per
 * 100 posts) rather than one `refresh` per button. Each button shows its
 * placeholder until the page lands; if the read fails, the page says so
 * once. In an app each row would be the post itself, the button under it.
 */
@Composable
fun LikeFeed(client: LikeClient, postIds: List<Long>, modifier: Modifier = Modifier) {
    var pageError by remember(client, postIds) { mutableStateOf<String?>(null) }
    LaunchedEffect(client, postIds) {
        pageError = try {
            client.refreshMany(postIds)
            null
        } catch (e: LikeException) {
            "Couldn't load likes: ${e.reason}"
        } catch (e: IllegalStateException) {
            null // a closed client (the viewer signing out)
        }
    }
    LazyColumn(modifier) {
        pageError?.let { error ->
            item { Text(error, color = MaterialTheme.colorScheme.error) }
        }
        items(postIds, key = { it }) { postId ->
            LikeButton(client, postId, read = false)
        }
    }
}
