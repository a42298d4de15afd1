"""k-nearest-neighbour classification with einsum distances and argpartition."""


def run(np):
    rng = np.random.default_rng(10)
    train = rng.standard_normal((80, 4))
    labels = (train[:, 0] + 0.5 * train[:, 1] > 0).astype(np.int32)
    queries = rng.standard_normal((12, 4))
    # |q - t|^2 = |q|^2 - 2 q.t + |t|^2
    q2 = np.einsum("ij,ij->i", queries, queries)
    t2 = np.einsum("ij,ij->i", train, train)
    cross = np.einsum("ik,jk->ij", queries, train)
    d2 = q2[:, None] - 2 * cross + t2[None, :]
    d2 = np.maximum(d2, 0.0)
    k = 5
    nearest = np.argpartition(d2, k, axis=1)[:, :k]
    # argpartition leaves the k nearest unordered: sort them by distance.
    nearest_d = np.take_along_axis(d2, nearest, axis=1)
    order = np.argsort(nearest_d, axis=1)
    nearest = np.take_along_axis(nearest, order, axis=1)
    votes = labels[nearest].sum(axis=1)
    predicted = (votes * 2 > k).astype(np.int32)
    truth = (queries[:, 0] + 0.5 * queries[:, 1] > 0).astype(np.int32)
    return {
        "nearest": nearest,
        "distances": np.sqrt(np.take_along_axis(d2, nearest, axis=1)),
        "predicted": predicted,
        "accuracy": np.mean(predicted == truth),
        "closest_overall": np.unravel_index(np.argmin(d2), d2.shape),
        "trace_gram": np.einsum("ii", cross[:, :12]),
    }
