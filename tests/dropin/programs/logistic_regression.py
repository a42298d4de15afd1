"""Binary logistic regression trained by batch gradient descent."""


def sigmoid(np, z):
    return 1.0 / (1.0 + np.exp(-z))


def run(np):
    rng = np.random.default_rng(1)
    n, d = 200, 3
    X = rng.normal(size=(n, d))
    true_w = np.array([1.5, -2.0, 0.5])
    y = (X @ true_w + 0.3 * rng.normal(size=n) > 0).astype(np.float64)
    X = np.hstack([X, np.ones((n, 1))])  # bias column
    w = np.zeros(d + 1)
    lr = 0.5
    losses = []
    for _epoch in range(100):
        p = sigmoid(np, X @ w)
        p = np.clip(p, 1e-12, 1 - 1e-12)
        loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
        grad = X.T @ (p - y) / n
        w -= lr * grad
        losses.append(float(loss))
    predictions = sigmoid(np, X @ w) >= 0.5
    accuracy = (predictions == (y == 1)).mean()
    return {
        "weights": w,
        "losses": np.array(losses),
        "accuracy": accuracy,
        "predicted_positive": int(predictions.sum()),
        "report": f"loss {losses[-1]:.4f}, accuracy {accuracy:.2%}",
    }
