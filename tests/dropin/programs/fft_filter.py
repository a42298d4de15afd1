"""Low-pass filtering of a noisy signal in the frequency domain with rfft/irfft."""


def run(np):
    rng = np.random.default_rng(5)
    fs, n = 256.0, 512
    t = np.arange(n) / fs
    clean = np.sin(2 * np.pi * 5 * t) + 0.5 * np.sin(2 * np.pi * 12 * t)
    noisy = clean + 0.4 * np.sin(2 * np.pi * 60 * t) + 0.1 * rng.standard_normal(n)
    spectrum = np.fft.rfft(noisy)
    freqs = np.fft.rfftfreq(n, d=1 / fs)
    power = np.abs(spectrum) ** 2 / n
    spectrum[freqs > 20] = 0
    filtered = np.fft.irfft(spectrum, n=n)
    peaks = freqs[np.argsort(power)[::-1][:3]]
    full = np.fft.fft(clean)
    return {
        "filtered": filtered,
        "error": np.sqrt(np.mean((filtered - clean) ** 2)),
        "peaks": np.sort(peaks),
        "power_head": power[:16],
        "dc": spectrum[0].real,
        "parseval": np.allclose(np.sum(np.abs(full) ** 2) / n, np.sum(clean**2)),
        "shifted_freqs": np.fft.fftshift(np.fft.fftfreq(8, d=0.5)),
    }
