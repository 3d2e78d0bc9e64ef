// Under `make tsan` (-DBLUECAP_TSAN) `Mutex` in this module is a pthread mutex that
// ThreadSanitizer sees (Synchronization.Mutex is futex-based on Linux and invisible to it).
#if BLUECAP_TSAN
import DBus
typealias Mutex = PthreadMutex
#endif
