export async function countChecks() {}
