
// Releasing a handle twice is harmless: `free()` (and `[Symbol.dispose]`)
// on a handle already freed does nothing, and `shutdown()` on a freed
// client resolves `true` at once (nothing is left in it to finish), rather
// than throwing `null pointer passed to rust` from a cleanup that ran
// twice (React 18's effects re-run with the same client during a hot
// reload, a `using` block around an explicit `free()`). Every other call
// on a freed handle still throws.
for (const Class of [LikeClient, ScriptedServer]) {
    const free = Class.prototype.free;
    Class.prototype.free = function () {
        if (this.__wbg_ptr !== 0) free.call(this);
    };
    if (Symbol.dispose) Class.prototype[Symbol.dispose] = Class.prototype.free;
}
const shutdownOnce = LikeClient.prototype.shutdown;
LikeClient.prototype.shutdown = function (deadlineMs) {
    return this.__wbg_ptr === 0 ? Promise.resolve(true) : shutdownOnce.call(this, deadlineMs);
};
