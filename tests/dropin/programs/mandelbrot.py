"""Escape-time Mandelbrot set on a small grid of complex numbers."""


def run(np):
    width, height, max_iter = 48, 32, 30
    re = np.linspace(-2.2, 0.8, width)
    im = np.linspace(-1.2, 1.2, height)
    c = re[np.newaxis, :] + 1j * im[:, np.newaxis]
    z = np.zeros_like(c)
    escaped_at = np.full(c.shape, max_iter, dtype=np.int32)
    alive = np.ones(c.shape, dtype=bool)
    for i in range(max_iter):
        z[alive] = z[alive] ** 2 + c[alive]
        escaped = alive & (np.abs(z) > 2.0)
        escaped_at[escaped] = i
        alive &= ~escaped
    inside = escaped_at == max_iter
    area = inside.mean() * (3.0 * 2.4)
    return {
        "counts": escaped_at,
        "area": area,
        "inside": inside.sum(),
        "c_dtype": str(c.dtype),
        "z_corner": z[:2, :2],
        "angle": np.angle(c[0, :4]),
        "conj_sum": np.conj(c).sum(),
    }
