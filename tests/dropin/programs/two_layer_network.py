"""A two-layer neural network trained with hand-written backpropagation on XOR-like data."""


def run(np):
    rng = np.random.default_rng(8)
    n = 64
    X = rng.uniform(-1, 1, size=(n, 2))
    y = ((X[:, 0] * X[:, 1]) > 0).astype(np.int64)
    hidden = 16
    W1 = rng.standard_normal((2, hidden)) * np.sqrt(2.0 / 2)
    b1 = np.zeros(hidden)
    W2 = rng.standard_normal((hidden, 2)) * np.sqrt(1.0 / hidden)
    b2 = np.zeros(2)
    lr, losses = 0.5, []
    for _epoch in range(150):
        z1 = X @ W1 + b1
        h = np.maximum(z1, 0)
        logits = h @ W2 + b2
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        probs /= probs.sum(axis=1, keepdims=True)
        loss = -np.log(probs[np.arange(n), y]).mean()
        losses.append(loss)
        dlogits = probs.copy()
        dlogits[np.arange(n), y] -= 1
        dlogits /= n
        dW2 = h.T @ dlogits
        db2 = dlogits.sum(axis=0)
        dh = dlogits @ W2.T
        dz1 = dh * (z1 > 0)
        dW1 = X.T @ dz1
        db1 = dz1.sum(axis=0)
        for param, grad in ((W1, dW1), (b1, db1), (W2, dW2), (b2, db2)):
            param -= lr * grad
    predicted = np.argmax(np.maximum(X @ W1 + b1, 0) @ W2 + b2, axis=1)
    return {
        "losses": np.array(losses),
        "W1": W1,
        "b2": b2,
        "train_accuracy": np.mean(predicted == y),
        "hidden_active": (np.maximum(X @ W1 + b1, 0) > 0).sum(axis=0),
    }
