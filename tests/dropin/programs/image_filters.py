"""Image-like operations: padding, a box blur and Sobel edges by slicing, thresholding."""


def convolve3x3(np, image, kernel):
    padded = np.pad(image, 1, mode="edge")
    h, w = image.shape
    out = np.zeros_like(image, dtype=np.float64)
    for dy in range(3):
        for dx in range(3):
            out += kernel[dy, dx] * padded[dy : dy + h, dx : dx + w]
    return out


def run(np):
    yy, xx = np.mgrid[0:24, 0:32]
    image = ((xx - 16) ** 2 + (yy - 12) ** 2 < 64).astype(np.float64) * 200.0
    image += 20.0 * (xx / 31.0)
    box = np.ones((3, 3)) / 9.0
    blurred = convolve3x3(np, image, box)
    sobel_x = np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]], dtype=np.float64)
    gx = convolve3x3(np, blurred, sobel_x)
    gy = convolve3x3(np, blurred, sobel_x.T)
    magnitude = np.hypot(gx, gy)
    edges = magnitude > 0.5 * magnitude.max()
    as_bytes = np.clip(blurred, 0, 255).astype(np.uint8)
    reflect = np.pad(np.arange(4), (2, 3), mode="reflect")
    constant = np.pad(np.ones((2, 2), dtype=np.int32), ((1, 0), (0, 2)), constant_values=7)
    return {
        "blurred": blurred,
        "magnitude": magnitude,
        "edge_count": edges.sum(),
        "bytes": as_bytes,
        "bytes_hist": np.bincount(as_bytes.ravel() // 32, minlength=8),
        "reflect": reflect,
        "constant": constant,
        "downsampled": image[::2, ::2].reshape(12, 16),
        "pooled": image.reshape(12, 2, 16, 2).max(axis=(1, 3)),
    }
