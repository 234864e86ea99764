// A Jetpack Compose like button on LikeKit: the heart, the count, the
// "Liked by …" line and a "didn't save" message. Uses the Kotlin that
// `cargo xtask bindings` generates (package com.likekit) and the library
// built per ABI with cargo-ndk; see the README's Android section.
//
//     val client = LikeClient("https://likes.example.com", SessionToken(session))
//     LikeButton(client, postId = 42L)
//
// One client per signed-in viewer, shared by every button; close() it on
// sign-out.
package com.example.likes

import android.os.Handler
import android.os.Looper
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
import androidx.compose.runtime.DisposableEffect
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.setValue
import androidx.compose.ui.Alignment
import androidx.compose.ui.Modifier
import androidx.compose.ui.graphics.Color
import com.likekit.LikeClient
import com.likekit.LikeException
import com.likekit.LikeObserver
import com.likekit.PostView
import com.likekit.TokenProvider
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
 * One post's like state for Compose. LikeKit calls observers on whichever
 * thread fed it (often one of its own), so events are posted to the main
 * thread, in order.
 */
class LikeButtonState(private val client: LikeClient, private val postId: Long) : LikeObserver, AutoCloseable {
    var view: PostView? by mutableStateOf(client.view(postId))
        private set
    var failure: String? by mutableStateOf(null)
        private set

    private val main = Handler(Looper.getMainLooper())
    private val subscription = client.subscribe(postId, this)

    /** The heart was tapped: the new view comes back at once, before any I/O. */
    fun tap() {
        failure = null
        view = client.toggle(postId)
    }

    /** Reads the post (others' likes, the friends line) when it appears. */
    suspend fun load() {
        try {
            view = client.refresh(postId)
        } catch (e: LikeException) {
            failure = "Couldn't load likes: ${e.message}"
        }
    }

    override fun onChange(view: PostView) {
        main.post { this.view = view }
    }

    override fun onFailure(postId: Long, wanted: Boolean, error: LikeException) {
        main.post { failure = if (wanted) "Your like didn't save." else "Your unlike didn't save." }
    }

    override fun close() = subscription.close()
}

/** The heart, the count, the line under the post and the "didn't save" message. */
@Composable
fun LikeButton(client: LikeClient, postId: Long, modifier: Modifier = Modifier) {
    val state = remember(client, postId) { LikeButtonState(client, postId) }
    DisposableEffect(state) { onDispose { state.close() } }
    LaunchedEffect(state) { state.load() }

    val view = state.view
    val liked = view?.liked == true
    Column(modifier) {
        Row(verticalAlignment = Alignment.CenterVertically) {
            IconToggleButton(checked = liked, onCheckedChange = { state.tap() }) {
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
        state.failure?.let {
            Text(it, color = MaterialTheme.colorScheme.error, style = MaterialTheme.typography.bodySmall)
        }
    }
}
