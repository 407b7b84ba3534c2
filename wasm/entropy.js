// Replaces Emscripten's getentropy (one crypto call per byte) with one call
// per buffer. The TypeScript loader passes `dpqFillRandom` (the runtime's
// crypto.getRandomValues); without it getentropy fails and the core reports
// ENTROPY_UNAVAILABLE instead of releasing anything.
mergeInto(LibraryManager.library, {
  getentropy: function (buffer, size) {
    var fill = Module['dpqFillRandom'];
    if (typeof fill !== 'function') return -1;
    try {
      fill(HEAPU8.subarray(buffer, buffer + size));
      return 0;
    } catch (e) {
      return -1;
    }
  },
});
