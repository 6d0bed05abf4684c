"""A small thread pool for executor work (TF's inter-op pool).

Work items are plain callables. It is cheaper than concurrent.futures (no
Future per item): submitting is one SimpleQueue.put. Threads are daemons,
started lazily, and stop when the pool is shut down.
"""
import queue
import threading


class Runner:
    def __init__(self, num_threads, name="graphrt-runner"):
        self.num_threads = max(1, int(num_threads))
        self.name = name
        self._queue = queue.SimpleQueue()
        self._threads = []
        self._lock = threading.Lock()
        self._closed = False

    def __call__(self, fn):
        if self._closed:
            raise RuntimeError(f"{self.name} is shut down")
        if len(self._threads) < self.num_threads:
            self._start_thread()
        self._queue.put(fn)

    def _start_thread(self):
        with self._lock:
            if len(self._threads) >= self.num_threads:
                return
            t = threading.Thread(target=self._work, name=f"{self.name}-{len(self._threads)}", daemon=True)
            self._threads.append(t)
            t.start()

    def add_threads(self, n):
        """n more threads, to stand in for threads abandoned in a blocked kernel (see step_driver)."""
        with self._lock:
            self.num_threads += n

    def retire_threads(self, n):
        """Undoes add_threads(n) once the abandoned threads are back: n threads exit when idle."""
        with self._lock:
            self.num_threads = max(1, self.num_threads - n)
            surplus = len(self._threads) - self.num_threads
        for _ in range(max(0, min(n, surplus))):
            self._queue.put(None)

    def _work(self):
        get = self._queue.get
        while True:
            fn = get()
            if fn is None:
                with self._lock:
                    try:
                        self._threads.remove(threading.current_thread())
                    except ValueError:
                        pass
                return
            try:
                fn()
            except BaseException:  # a work item must never kill the pool thread
                import traceback
                traceback.print_exc()

    def shutdown(self, timeout=5.0):
        self._closed = True
        threads = list(self._threads)
        for _ in threads:
            self._queue.put(None)
        for t in threads:
            if t is not threading.current_thread():
                t.join(timeout)
        self._threads = []

    def __repr__(self):
        return f"<Runner {self.name} threads={len(self._threads)}/{self.num_threads}>"
