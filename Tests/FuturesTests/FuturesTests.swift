// FuturesTests
