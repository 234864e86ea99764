// The JSON reader and writer behind the admin client's typed values: enough
// JSON for the admin API and nothing more, so that the client needs no
// library beyond the Kotlin standard library.
package com.likekit.testing

/** A text that is not JSON, or JSON that is not the value asked for. */
internal class JsonException(message: String) : IllegalArgumentException(message)

/**
 * JSON as plain values: an object is a `Map<String, Any?>` (in the order
 * written), an array a `List<Any?>`, then `String`, `Boolean` and `null`.
 * An integer is a `Long`, or a `ULong` above `Long.MAX_VALUE` (the server's
 * seeds are unsigned 64-bit); a number with a fraction or an exponent is a
 * `Double`.
 */
internal object Json {
    /** Nesting deeper than this is refused rather than overflowing the stack. */
    private const val MAX_DEPTH = 256

    /** The value `text` holds; [JsonException] when it is not exactly one JSON value. */
    fun parse(text: String): Any? = Reader(text).document()

    /** `value` as compact JSON; [JsonException] for what JSON cannot hold (NaN, other types). */
    fun write(value: Any?): String = StringBuilder().also { write(value, it) }.toString()

    private fun write(value: Any?, out: StringBuilder) {
        when (value) {
            null -> out.append("null")
            is Boolean -> out.append(value)
            is Long, is Int, is ULong -> out.append(value)
            is Double -> {
                if (value.isNaN() || value.isInfinite()) throw JsonException("$value is not a JSON number")
                out.append(value)
            }
            is String -> writeString(value, out)
            is Map<*, *> -> {
                out.append('{')
                var first = true
                for ((key, item) in value) {
                    if (key !is String) throw JsonException("an object key must be a string, not $key")
                    if (!first) out.append(',')
                    first = false
                    writeString(key, out)
                    out.append(':')
                    write(item, out)
                }
                out.append('}')
            }
            is List<*> -> {
                out.append('[')
                value.forEachIndexed { i, item ->
                    if (i > 0) out.append(',')
                    write(item, out)
                }
                out.append(']')
            }
            else -> throw JsonException("cannot write a ${value::class.simpleName} as JSON")
        }
    }

    private fun writeString(s: String, out: StringBuilder) {
        out.append('"')
        for (c in s) {
            when (c) {
                '"' -> out.append("\\\"")
                '\\' -> out.append("\\\\")
                '\n' -> out.append("\\n")
                '\r' -> out.append("\\r")
                '\t' -> out.append("\\t")
                '\b' -> out.append("\\b")
                '\u000C' -> out.append("\\f")
                else -> if (c < ' ') {
                    out.append("\\u").append(c.code.toString(16).padStart(4, '0'))
                } else {
                    out.append(c)
                }
            }
        }
        out.append('"')
    }

    private class Reader(private val text: String) {
        private var at = 0

        fun document(): Any? {
            val value = value(0)
            skipSpace()
            if (at != text.length) fail("text after the value")
            return value
        }

        private fun fail(what: String): Nothing = throw JsonException("not JSON: $what at offset $at")

        private fun skipSpace() {
            while (at < text.length && text[at].let { it == ' ' || it == '\n' || it == '\r' || it == '\t' }) at++
        }

        private fun value(depth: Int): Any? {
            if (depth > MAX_DEPTH) fail("nesting deeper than $MAX_DEPTH")
            skipSpace()
            if (at >= text.length) fail("the end of the text where a value was expected")
            return when (val c = text[at]) {
                '{' -> obj(depth)
                '[' -> array(depth)
                '"' -> string()
                't' -> literal("true", true)
                'f' -> literal("false", false)
                'n' -> literal("null", null)
                else -> if (c == '-' || c in '0'..'9') number() else fail("unexpected '$c'")
            }
        }

        private fun literal(word: String, value: Any?): Any? {
            if (!text.startsWith(word, at)) fail("unexpected '${text[at]}'")
            at += word.length
            return value
        }

        private fun obj(depth: Int): Map<String, Any?> {
            at++ // {
            val map = LinkedHashMap<String, Any?>()
            skipSpace()
            if (at < text.length && text[at] == '}') {
                at++
                return map
            }
            while (true) {
                skipSpace()
                if (at >= text.length || text[at] != '"') fail("expected a key")
                val key = string()
                if (map.containsKey(key)) fail("the key \"$key\" twice")
                skipSpace()
                if (at >= text.length || text[at] != ':') fail("expected ':'")
                at++
                map[key] = value(depth + 1)
                skipSpace()
                when (if (at < text.length) text[at] else ' ') {
                    ',' -> at++
                    '}' -> {
                        at++
                        return map
                    }
                    else -> fail("expected ',' or '}'")
                }
            }
        }

        private fun array(depth: Int): List<Any?> {
            at++ // [
            val list = ArrayList<Any?>()
            skipSpace()
            if (at < text.length && text[at] == ']') {
                at++
                return list
            }
            while (true) {
                list.add(value(depth + 1))
                skipSpace()
                when (if (at < text.length) text[at] else ' ') {
                    ',' -> at++
                    ']' -> {
                        at++
                        return list
                    }
                    else -> fail("expected ',' or ']'")
                }
            }
        }

        private fun string(): String {
            at++ // "
            val out = StringBuilder()
            while (true) {
                if (at >= text.length) fail("an unterminated string")
                val c = text[at++]
                when {
                    c == '"' -> return out.toString()
                    c == '\\' -> {
                        if (at >= text.length) fail("an unterminated escape")
                        when (val e = text[at++]) {
                            '"' -> out.append('"')
                            '\\' -> out.append('\\')
                            '/' -> out.append('/')
                            'b' -> out.append('\b')
                            'f' -> out.append('\u000C')
                            'n' -> out.append('\n')
                            'r' -> out.append('\r')
                            't' -> out.append('\t')
                            'u' -> {
                                if (at + 4 > text.length) fail("a short \\u escape")
                                val hex = text.substring(at, at + 4)
                                if (!hex.all { it in '0'..'9' || it in 'a'..'f' || it in 'A'..'F' }) fail("a bad \\u escape")
                                // A surrogate pair comes as two escapes, one UTF-16 unit each.
                                out.append(hex.toInt(16).toChar())
                                at += 4
                            }
                            else -> fail("the escape \\$e")
                        }
                    }
                    c < ' ' -> fail("a control character in a string")
                    else -> out.append(c)
                }
            }
        }

        private fun number(): Any {
            val start = at
            if (text[at] == '-') at++
            if (at < text.length && text[at] == '0') {
                at++
            } else if (at < text.length && text[at] in '1'..'9') {
                while (at < text.length && text[at] in '0'..'9') at++
            } else {
                fail("a number without digits")
            }
            var whole = true
            if (at < text.length && text[at] == '.') {
                whole = false
                at++
                if (at >= text.length || text[at] !in '0'..'9') fail("a number without digits after '.'")
                while (at < text.length && text[at] in '0'..'9') at++
            }
            if (at < text.length && (text[at] == 'e' || text[at] == 'E')) {
                whole = false
                at++
                if (at < text.length && (text[at] == '+' || text[at] == '-')) at++
                if (at >= text.length || text[at] !in '0'..'9') fail("a number without digits in its exponent")
                while (at < text.length && text[at] in '0'..'9') at++
            }
            val literal = text.substring(start, at)
            if (!whole) return literal.toDouble()
            return literal.toLongOrNull()
                ?: literal.toULongOrNull()
                ?: throw JsonException("the integer $literal is outside the 64-bit range")
        }
    }
}

/**
 * The fields of one JSON object being decoded into `type`, read with the
 * checks the admin API's types make: a field of the wrong type, out of its
 * range, or missing when required is a [JsonException] naming it. A field
 * nobody asks for is ignored, unless [only] refuses it.
 */
internal class JsonFields private constructor(private val map: Map<*, *>, private val type: String) {
    /** These fields, after refusing any field not in `names`. */
    fun only(vararg names: String): JsonFields {
        val unknown = map.keys.filter { key -> names.none { it == key } }
        if (unknown.isNotEmpty()) throw JsonException("$type has no field ${unknown.joinToString { "\"$it\"" }}")
        return this
    }

    /** The value of `name`; null when it is missing or JSON null. */
    fun opt(name: String): Any? = map[name]

    /** The value of `name`, which must be there and not null. */
    fun req(name: String): Any = map[name] ?: throw JsonException("$type.$name is missing or null")

    /** The value of `name`, which may be missing (then null) but not JSON null. */
    fun notNull(name: String): Any? {
        if (map.containsKey(name) && map[name] == null) throw JsonException("$type.$name is null")
        return map[name]
    }

    fun where(name: String) = "$type.$name"

    companion object {
        fun of(value: Any?, type: String): JsonFields =
            JsonFields(value as? Map<*, *> ?: throw JsonException("$type must be a JSON object, not ${kindOf(value)}"), type)

        fun kindOf(value: Any?): String = when (value) {
            null -> "null"
            is Map<*, *> -> "an object"
            is List<*> -> "an array"
            is String -> "a string"
            is Boolean -> "a boolean"
            is Long, is ULong -> "an integer"
            is Double -> "a decimal number"
            else -> value::class.simpleName ?: "a value"
        }
    }
}

// Conversions from plain JSON values, each naming the field (`what`) it
// refuses.

internal fun jsonLong(value: Any?, what: String, min: Long = Long.MIN_VALUE, max: Long = Long.MAX_VALUE): Long {
    val n = value as? Long ?: throw JsonException("$what must be an integer, not ${JsonFields.kindOf(value)}")
    if (n < min || n > max) throw JsonException("$what must be from $min to $max, not $n")
    return n
}

/** A non-negative integer (an unsigned field that fits in a `Long`). */
internal fun jsonCount(value: Any?, what: String): Long = jsonLong(value, what, min = 0)

/** A user or post id: 1 to `Long.MAX_VALUE`. */
internal fun jsonId(value: Any?, what: String): Long = jsonLong(value, what, min = 1)

internal fun jsonInt(value: Any?, what: String, min: Int, max: Int): Int =
    jsonLong(value, what, min.toLong(), max.toLong()).toInt()

internal fun jsonULong(value: Any?, what: String): ULong = when (value) {
    is ULong -> value
    is Long -> if (value >= 0) value.toULong() else throw JsonException("$what must not be negative, not $value")
    else -> throw JsonException("$what must be an integer, not ${JsonFields.kindOf(value)}")
}

internal fun jsonDouble(value: Any?, what: String): Double = when (value) {
    is Double -> value
    is Long -> value.toDouble()
    is ULong -> value.toDouble()
    else -> throw JsonException("$what must be a number, not ${JsonFields.kindOf(value)}")
}

internal fun jsonString(value: Any?, what: String): String =
    value as? String ?: throw JsonException("$what must be a string, not ${JsonFields.kindOf(value)}")

internal fun jsonBoolean(value: Any?, what: String): Boolean =
    value as? Boolean ?: throw JsonException("$what must be true or false, not ${JsonFields.kindOf(value)}")

internal fun jsonList(value: Any?, what: String): List<*> =
    value as? List<*> ?: throw JsonException("$what must be an array, not ${JsonFields.kindOf(value)}")

internal fun jsonIds(value: Any?, what: String): List<Long> =
    jsonList(value, what).mapIndexed { i, item -> jsonId(item, "$what[$i]") }
