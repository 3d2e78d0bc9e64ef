// Futures: futures and promises.
