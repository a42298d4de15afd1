"""A numerically stable softmax and cross-entropy, and its gradient, written by hand."""


def softmax(np, logits):
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=1, keepdims=True)


def run(np):
    rng = np.random.default_rng(2)
    batch, classes = 16, 5
    logits = rng.standard_normal((batch, classes)) * 3.0
    labels = rng.integers(0, classes, size=batch)
    probs = softmax(np, logits)
    # log-softmax through logsumexp, the stable way
    m = logits.max(axis=1, keepdims=True)
    log_probs = logits - (m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True)))
    nll = -log_probs[np.arange(batch), labels]
    loss = nll.mean()
    one_hot = np.eye(classes)[labels]
    grad = (probs - one_hot) / batch
    picked = np.take_along_axis(probs, labels[:, None], axis=1).squeeze(1)
    predicted = probs.argmax(axis=1)
    return {
        "probs": probs,
        "row_sums": probs.sum(axis=1),
        "loss": loss,
        "grad": grad,
        "picked": picked,
        "accuracy": np.mean(predicted == labels),
        "float32_loss": softmax(np, logits.astype(np.float32)).max(axis=1),
    }
