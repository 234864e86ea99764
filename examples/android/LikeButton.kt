// A Jetpack Compose like button on LikeKit: the heart, the count, the
// "Liked by …" line and a "didn't save" message, on the package's Flow
// faces (`views`, in LikeKitFlows.kt beside the generated Kotlin). Uses the
// Kotlin that `cargo xtask bindings` generates (package com.likekit, with
// kotlinx-coroutines) and the library built per ABI with cargo-ndk; see the
// README's Android section.
//
//     val client = LikeClient("https://likes.example.com", SessionToken(token))
//     LikeButton(client, postId = 42L)
//
// One client per signed-in viewer, shared by every button. To keep taps
// across app restarts give it the viewer's journal, in noBackupFilesDir
// (Auto Backup copies filesDir and would restore stale taps elsewhere):
//
//     val journal = IntentJournal.file(context.noBackupFilesDir.path, viewer = userId)
//     val client = LikeClient(url, SessionToken(token), LikeClientOptions(journal = journal))
//     val report = client.restore()   // report.expired: taps too old to send
//
// On sign-out let calls still out finish, then close both (a tap cut off at
// the deadline stays in the journal and is sent at the next sign-in;
// close() alone leaves calls running without a token, so they fail and
// roll back):
//
//     appScope.launch {
//         client.shutdown(2_000)
//         client.close()
//         journal.close()
//     }
package com.example.likes

import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.Row
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

/** The heart, the count, the line under the post and the "didn't save" message. */
@Composable
fun LikeButton(client: LikeClient, postId: Long, modifier: Modifier = Modifier) {
    // The post's view: the one the client holds at once, then every change
    // (the tap's own before any I/O, the server's answer, a rollback),
    // collected on the main thread; leaving the screen unsubscribes.
    val views = remember(client, postId) { client.views(postId) }
    val view by views.collectAsState(initial = client.view(postId))
    var loadError by remember(client, postId) { mutableStateOf<String?>(null) }
    // Read the post (others' likes, the friends line) when it appears.
    LaunchedEffect(client, postId) {
        loadError = try {
            client.refresh(postId)
            null
        } catch (e: LikeException) {
            "Couldn't load likes: ${e.reason}"
        }
    }

    val liked = view?.liked == true
    Column(modifier) {
        Row(verticalAlignment = Alignment.CenterVertically) {
            IconToggleButton(checked = liked, onCheckedChange = { client.toggle(postId) }) {
                Icon(
                    imageVector = if (liked) Icons.Filled.Favorite else Icons.Filled.FavoriteBorder,
                    contentDescription = if (liked) "Unlike" else "Like",
                    tint = if (liked) Color.Red else LocalContentColor.current,
                )
            }
            Text(NumberFormat.getIntegerInstance().format(view?.count ?: 0L))
        }
        val line = view?.line?.text.orEmpty() // "Liked by Ana and 1,203 others"
        if (line.isNotEmpty()) {
            Text(line, style = MaterialTheme.typography.bodySmall)
        }
        // The last tap did not save (after its retries): the view is back at
        // the server's state and says why until the next tap. A pending view
        // with an error is still being tried (keepWhileOfflineMs): it shows
        // the tap, not the server's state. A screen-wide snackbar can collect
        // `client.failures` instead, whose `wanted` says which tap it was.
        val shown = view
        val message = when {
            shown == null || shown.error == null -> loadError
            shown.pending -> if (shown.liked) "Offline: your like will be sent." else "Offline: your unlike will be sent."
            else -> if (shown.liked) "Your unlike didn't save." else "Your like didn't save."
        }
        message?.let {
            Text(it, color = MaterialTheme.colorScheme.error, style = MaterialTheme.typography.bodySmall)
        }
    }
}
